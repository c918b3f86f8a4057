"""The first block's upper end by sampling (lab, 27 Nov 2026): how far the empirical Bernstein upper value of a
first-layer relu unit's mean factor, with the majorant G as range, can go below log G, against the unit's own mean.
P1-like: 54 inputs, N = 100 Gaussian inputs, sigma^2 = 0.1, s = t*sqrt(c) with c = 0.223 (eps = 1e-3: s = 4.72;
eps = 0.1: s = 1.017). numpy only; its own data, so near, not equal to, twoscale's numbers.
"""
import numpy as np
rng=np.random.default_rng(1)
N,D=100,54; sig2=0.1
X=rng.standard_normal((N,D))
for s in [4.72, 1.017]:
    lam=np.linalg.eigvalsh(X.T@X/N/sig2); lam=np.clip(lam,0,None)
    logG=np.sum(np.log1p(s*np.sqrt(lam)))
    n=20000
    W=rng.uniform(-1,1,(n,D))
    A=(X@W.T>0)  # N x n
    vals=[]
    for k in range(n):
        Xa=X[A[:,k]]
        l=np.linalg.eigvalsh(Xa.T@Xa/N/sig2); l=np.clip(l,0,None)
        vals.append(np.sum(np.log1p(s*np.sqrt(l))))
    v=np.array(vals)
    m=v.max(); logEg=m+np.log(np.mean(np.exp(v-m)))
    print("s",s,"logG",logG,"E log g",v.mean(),"log E g",logEg,"sd",v.std(),"max seen",v.max())
    for nn,delta in [(1e4,0.01/16),(1e5,0.01/16),(1e6,0.01/16)]:
        L=np.log(2/delta)
        # empirical Bernstein (Maurer-Pontil) in units of G: mean/G + sqrt(2 V L/n) + 7 L/(3(n-1))
        r=np.exp(v-logG)  # in [0,1]
        mu=r.mean(); V=r.var()
        ub=mu+np.sqrt(2*V*L/nn)+7*L/(3*(nn-1))
        print("  n",nn,"certified log U - logG:",np.log(ub), " true logEg-logG:",logEg-logG)
