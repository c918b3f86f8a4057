#!/usr/bin/env python3
"""How much of a later stage's outer log-weights log Ẑ_m^k a function of θ_{<m} explains (lab log, 4 Dec 2026,
fifty-fourth session). Reads the JSON lines a build with lab/patches/surrogate-tempering.patch writes under
TWOSCALE_LAB_DUMP=FILE (`ed`, the Markov FIM): per ε, stage and outer particle, log Ẑ_m^k, the island's noise
variance and the stage's input samples x (rows, columns, values). Regresses log Ẑ_m^k on features that are sums
over the previous layer's units (a twist of that layer's sampler could use them), on log det Π_m (Π_m = xᵀx/S)
and on the stage's majorant over its own weights, log M_m (the Gaussian block's C Σ log(1 + s√(π_i/σ²)), the
softmax block's (K − 1) Σ log(1 + s√(π_i/K)); s = ε^{−1/3} √c, ζ = 2/3).
Usage: outer-weights-regress.py DUMP C ARCH [SIGMA2]   (C: the run's `scale`, ARCH e.g. 54-13-11-9-7)"""
import json, sys
import numpy as np

rows = [json.loads(l) for l in open(sys.argv[1])]
c = float(sys.argv[2])
units = [int(u) for u in sys.argv[3].split('-')]
sig2 = float(sys.argv[4]) if len(sys.argv) > 4 else 0.1


def ess(lw):
    return float(np.exp(2 * np.logaddexp.reduce(lw) - np.logaddexp.reduce(2 * lw)))


def residual(y, X):
    X = np.column_stack([np.ones(len(y))] + list(X))
    r = y - X @ np.linalg.lstsq(X, y, rcond=None)[0]
    return float(r.var())


for eps in sorted({r['eps'] for r in rows}):
    s = eps ** (-1 / 3) * np.sqrt(c)
    for st in sorted({r['stage'] for r in rows}):
        R = [r for r in rows if r['eps'] == eps and r['stage'] == st]
        y = np.array([r['logZ'] for r in R])
        noise = np.array([r['noise'] for r in R])
        H = [np.array(r['x'][2:]).reshape(int(r['x'][0]), int(r['x'][1])) for r in R]
        S = H[0].shape[0]
        F2 = np.array([(h ** 2).mean(0) for h in H])
        mu = np.array([np.abs(h.mean(0)) + 1e-12 for h in H])
        additive = [np.log(F2).sum(1), F2.sum(1), np.log(mu).sum(1)]
        pis = [np.clip(np.linalg.eigvalsh(h.T @ h / S), 0, None) for h in H]
        logdet = np.array([np.log(p[p > 0]).sum() for p in pis])
        last = st == len(units) - 2
        if last:
            k = units[-1]
            major = np.array([(k - 1) * np.log1p(s * np.sqrt(p / k)).sum() for p in pis])
        else:
            major = np.array([units[st + 1] * np.log1p(s * np.sqrt(p / sig2)).sum() for p in pis])
        b = np.polyfit(major, y, 1)
        print(f"eps {eps:g} stage {st + 1} (K = {len(y)}): var {y.var():.3f} nats², islands' noise {noise.mean():.3f}; "
              f"residual: additive {residual(y, additive):.3f}, log det Π {residual(y, [logdet]):.3f}, "
              f"log M {residual(y, [major]):.3f} (slope {b[0]:.3f}); ESS {ess(y):.1f} -> {ess(y - b[0] * major):.1f}")
