"""The first block's tangent route (lab, 6 Dec 2026): how far the Chernoff-Hoeffding upper value of a first-layer
relu unit's mean factor can go below log G when each draw evaluates the unit's tangent majorant
(log g <= c0 + sum_i beta_i a_i(w), the tangent of the concave log-det at a_i = 1/2) instead of its eigenproblem:
2 000 000 cheap draws against 20 000 exact ones, at p = 1, 1.3 and 1.5 (Hoelder's exponent).
P1-like: 54 inputs, N = 100 Gaussian inputs, sigma^2 = 0.1, s = 4.72 (eps = 1e-3) and 1.017 (eps = 0.1), delta_u = 0.01/16
split in two. numpy only; its own data, so near, not equal to, twoscale's numbers.
"""
import numpy as np, math
from chernoff import klub
rng=np.random.default_rng(1)
N,D=100,54; sig2=0.1
X=rng.standard_normal((N,D))
for s in [4.72, 1.017]:
    S=X.T@X/N/sig2
    lam=np.clip(np.linalg.eigvalsh(S),0,None)
    logG=np.sum(np.log1p(s*np.sqrt(lam)))
    mu,V=np.linalg.eigh(S/2); mu=np.clip(mu,1e-300,None)
    phi=np.log1p(s*np.sqrt(mu)); dphi=s/(2*np.sqrt(mu)*(1+s*np.sqrt(mu)))
    c0=phi.sum()-(dphi*mu).sum()
    P=V@np.diag(dphi)@V.T
    beta=np.einsum('sd,de,se->s',X,P,X)/N/sig2
    n=20000
    W=rng.uniform(-1,1,(n,D))
    A=(X@W.T>0)
    v=[];t=[]
    for k in range(n):
        Xa=X[A[:,k]]
        l=np.clip(np.linalg.eigvalsh(Xa.T@Xa/N/sig2),0,None)
        v.append(np.sum(np.log1p(s*np.sqrt(l))))
    v=np.array(v); t=c0+beta@A
    lme=lambda a: a.max()+np.log(np.mean(np.exp(a-a.max())))
    print(f"s={s} logG={logG:.2f} E log g={v.mean():.2f} log E g={lme(v):.2f} | tangent: min(t-v)={np.min(t-v):.3f} E log ghat={t.mean():.2f} log E ghat={lme(t):.2f} max t={t.max():.2f} c0+sum beta={c0+beta.sum():.2f}")
    # many cheap draws
    nbig=2_000_000; tot=[]
    for chunk in range(20):
        W=rng.uniform(-1,1,(nbig//20,D)); A=(X@W.T>0)
        tot.append(c0+beta@A)
    tb=np.concatenate(tot); tb=np.minimum(tb,logG)
    print(f"   2M draws: log E min(ghat,G)={lme(tb):.2f} (vs logG {logG:.2f}); max={tb.max():.2f}")
    for p in [1,1.3,1.5]:
        for nn,arr in [(20000,np.minimum(v,logG)),(nbig,tb)]:
            r=np.exp(p*(arr-logG)); ub=klub(r.mean() if nn==len(arr) else r.mean(),len(arr),0.01/16/2)
            print(f"   p={p} n={len(arr)}: (1/p) log ub - logG = {math.log(ub)/p:.2f}")
