#!/usr/bin/env python3
"""What the bracket's upper end could reach in the mean (lab/ESTIMATORS-LOG.md, "The upper end in the mean").

For an MLP on N(0, I) inputs (relu, box [-1, 1], sigma^2 = 0.1, N = 100, one noise draw; data and noise drawn
here, not twoscale's), by uniform draws of theta:
  * per block m >= 1: log E_theta M_m and E_theta log M_m, M_m the block's majorant (its eigenvalues at
    act' = 1 on all samples, or uniform class probabilities) -- what a bound in the mean over *all* earlier
    layers could reach at best, against twoscale's `stage_log_upper`;
  * for block 1 (the previous layer is the data): one coordinate's log E (1 + a F)^C against the log-Sobolev
    bound of `MeanCeiling` and the supremum, and the Schur (diagonal) step's cost.
Usage: mean-ceiling.py ARCH EPS C   (C: the run's normalisation constant, from `ed --json`'s `normalization`)
"""
import sys
from math import log, log1p, pi, sqrt

import numpy as np

arch = [int(x) for x in sys.argv[1].split("-")]
eps, c = float(sys.argv[2]), float(sys.argv[3])
rng = np.random.default_rng(0)
n, sig2, K = 100, 0.1, arch[-1]
last = len(arch) - 2
Y0 = np.hstack([rng.standard_normal((n, arch[0])), np.ones((n, 1))])
noise = [sqrt(sig2) * rng.standard_normal((n, arch[k + 1])) for k in range(last)]
s = eps ** (2 / 3 - 1) * sqrt(c)


def factor(k):
    return 1 / K if k == last else 1 / sig2


def copies(k):
    return K - 1 if k == last else arch[k + 1]


def logmeanexp(a):
    m = a.max()
    return m + log(np.mean(np.exp(a - m)))


draws = 4000
eig_terms = np.zeros((draws, last + 1))
diag_terms = np.zeros((draws, last + 1))
for d in range(draws):
    Y = Y0
    for k in range(last + 1):
        P = Y.T @ Y / n
        phi = lambda lam: copies(k) * np.log1p(s * np.sqrt(factor(k) * np.maximum(lam, 0))).sum()
        eig_terms[d, k] = phi(np.linalg.eigvalsh(P))
        diag_terms[d, k] = phi(np.diag(P))
        if k < last:
            W = rng.uniform(-1, 1, (Y.shape[1], arch[k + 1]))
            Y = np.hstack([np.maximum(Y @ W, 0) + noise[k], np.ones((n, 1))])
print("block m >= 1: log E M_m (eigenvalues), E log M_m, log E (Schur diagonal)")
for k in range(1, last + 1):
    print(f"  block {k}: {logmeanexp(eig_terms[:, k]):.1f}  {eig_terms[:, k].mean():.1f}  {logmeanexp(diag_terms[:, k]):.1f}")

# One coordinate of block 1: F = ||relu(Y0 w) + v|| / sqrt(n), w uniform on [-1, 1]^q.
C, a = copies(1), s * sqrt(factor(1))
W = rng.uniform(-1, 1, (200_000, Y0.shape[1]))
F = np.sqrt(((np.maximum(W @ Y0.T, 0) + noise[0][:, 0]) ** 2).mean(1))
ez2 = (Y0 ** 2).sum(1) / 3
v = noise[0][:, 0]
mu = sqrt((ez2 / 2 + np.maximum(v, 0) * np.sqrt(ez2) + v * v).mean())
L = sqrt(np.linalg.eigvalsh(Y0.T @ Y0 / n)[-1]) * 2 / pi


def bound(mean, spread):
    y0, var = 1 + a * mean, a * a * spread * spread
    t = 2 * C / (y0 + sqrt(y0 * y0 + 4 * C * var))
    return C * log(C / t) - C + t * y0 + t * t * var / 2


print(f"one coordinate of block 1: log E (1 + aF)^C = {log(np.mean((1 + a * F) ** C)):.2f}, "
      f"bound {bound(mu, L):.2f} (mean {mu:.3f} vs E F {F.mean():.3f}; spread {L:.3f} vs sd {F.std():.3f}), "
      f"with the sampled sd as spread {bound(mu, F.std()):.2f}, supremum at the largest draw {C * log1p(a * F.max()):.2f}")
