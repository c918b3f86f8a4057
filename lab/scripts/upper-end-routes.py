"""Routes tried for a tighter network upper end (lab, 6 Dec 2026, seventy-third session), each on a numpy model
near P1 (54 Gaussian inputs and a bias, N = 100, sigma^2 = 0.1, 16 relu units, 7 classes; s = 4.72 at eps = 1e-3
and 1.017 at 0.1) or on the benchmark CNN's first two layers (the first 100 Fashion-MNIST training images). Its own
data and noise, so near, not equal to, twoscale's numbers. numpy only; about a minute and a half.

1. Herbst on a smoothed tangent: 1[z > 0] <= clip((z + m)/m, 0, 1), then log E e^F <= E F + L^2 (l/pi)^2 / 2.
2. The tangent's point a_i = alpha a^2 (alpha = 0.5 ... 1) and the minimum over 20 tangents, at p = 1 ... 2.
3. Exact factors on the top draws of the tangent (as many as the exact route affords), tangent elsewhere.
4. The softmax block's own weights: its factor at random weights against the uniform-probability majorant.
5. Rotfel'd's subadditivity with the hidden states centred, against Schur's diagonal.
6. The CNN's second block in the mean over the first convolution's weights (per-channel Schur, log-Sobolev).
7. A hidden layer's energy T (13 relu units, as 54-13-11-9-7's first layer): its spread over the weights, and the level
   t where a deterministic Chernoff bound from the units' sub-Gaussian scale puts P(T > t) below e^-50 ... e^-200.
"""
import numpy as np, math, gzip
from chernoff import klub
lme = lambda a: a.max() + np.log(np.mean(np.exp(a - a.max())))
N, D, H, K = 100, 54, 16, 7; sig2 = 0.1
rng = np.random.default_rng(1)
X = np.hstack([rng.standard_normal((N, D)), np.ones((N, 1))])


def tangent(s, a0):
    mu, V = np.linalg.eigh((X.T * a0) @ X / N / sig2); mu = np.clip(mu, 1e-300, None)
    phi = np.log1p(s * np.sqrt(mu)); dphi = s / (2 * np.sqrt(mu) * (1 + s * np.sqrt(mu)))
    return phi.sum() - (dphi * mu).sum(), np.einsum('sd,de,se->s', X, V @ np.diag(dphi) @ V.T, X) / N / sig2

def logg(s, a): return np.sum(np.log1p(s * np.sqrt(np.clip(np.linalg.eigvalsh((X.T * a) @ X / N / sig2), 0, None))))

def logMoment(c, alpha, mean, spread):  # MeanCeiling.logMoment
    y0 = 1 + alpha * mean; v = alpha ** 2 * spread ** 2
    t = 2 * c / (y0 + math.sqrt(y0 * y0 + 4 * c * v))
    return c * math.log(c / t) - c + t * y0 + t * t * v / 2

print("1. Herbst on a smoothed tangent (s = 4.72), relative to nothing: compare with log E ghat and log G")
s = 4.72; logG = logg(s, np.ones(N)); c0, b = tangent(s, np.full(N, 0.5))
W = rng.uniform(-1, 1, (200000, D + 1)); Z = W @ X.T; t = c0 + (Z > 0) @ b
L0 = np.linalg.norm(X, 2) * np.linalg.norm(b)
for m in [1, 4, 16]:
    EF = c0 + (np.clip((Z + m) / m, 0, 1) @ b).mean()
    print(f"   m = {m:2d}: E F = {EF:.1f}, Herbst term {(L0 / m) ** 2 * (2 / math.pi) ** 2 / 2:.1f}; log E ghat = {lme(t):.1f}, log G = {logG:.1f}")

print("2. The tangent's point and the minimum over tangents: (1/p) log E min(ghat, G)^p - log G per unit")
for s in [4.72, 1.017]:
    logG = logg(s, np.ones(N))
    A = (rng.uniform(-1, 1, (20000, D + 1)) @ X.T > 0).astype(float)
    v = np.array([logg(s, a) for a in A])
    Ab = (rng.uniform(-1, 1, (400000, D + 1)) @ X.T > 0).astype(float)
    print(f"   s = {s}: log E g - log G >= {lme(v) - logG:.2f} (20 000 exact draws), E log g - log G = {v.mean() - logG:.2f}")
    for p in [1, 1.3, 2]:
        row = []
        for al in [0.5, 0.6, 0.7, 0.8, 0.9, 1.0]:
            c0, b = tangent(s, np.full(N, al)); row.append(lme(p * np.minimum(c0 + Ab @ b, logG)) / p - logG)
        print(f"     p = {p}: alpha 0.5 ... 1.0: " + " ".join(f"{r:.2f}" for r in row))
    idx = np.argsort(-v)[:16]
    tans = [tangent(s, np.clip(A[i], 0.05, 1)) for i in idx] + [tangent(s, np.full(N, al)) for al in [0.5, 0.6, 0.7, 0.8]]
    T = np.min(np.stack([c + Ab @ bb for c, bb in tans]), 0)
    print(f"     minimum over 20 tangents (16 at the largest exact draws' patterns), p = 1: {lme(np.minimum(T, logG)) - logG:.2f}")

print("3. Exact factors on the tangent's top draws (2 000 of 10^6, the exact route's share), p = 1, delta = 0.01/16")
n = 1_000_000; budget = 2000
for s in [4.72, 1.017]:
    logG = logg(s, np.ones(N))
    for al in [0.5, 0.7]:
        c0, b = tangent(s, np.full(N, al))
        tau = np.quantile(c0 + (rng.uniform(-1, 1, (16384, D + 1)) @ X.T > 0) @ b, 1 - budget / n)
        ys = gs = 0.0
        for _ in range(10):
            A = (rng.uniform(-1, 1, (n // 10, D + 1)) @ X.T > 0)
            raw = c0 + A @ b; tt = np.minimum(raw, logG); y = tt.copy()
            for i in np.where(raw >= tau)[0]: y[i] = logg(s, A[i].astype(float))
            ys += np.exp(y - logG).sum(); gs += np.exp(tt - logG).sum()
        print(f"   s = {s}, alpha = {al}: tangent {math.log(klub(gs / n, n, 0.01 / 16)):.2f}, with the top draws exact "
              f"{math.log(klub(ys / n, n, 0.01 / 16)):.2f} (floor {math.log(klub(0, n, 0.01 / 16)):.2f})")

print("4. The softmax block's own weights at three random first layers (s = 4.72): nats")
s = 4.72; phi = lambda l: np.log1p(s * np.sqrt(np.clip(l, 0, None)))
V = rng.standard_normal((N, H)) * math.sqrt(sig2)
for rep in range(3):
    W1 = rng.uniform(-1, 1, (H, D + 1)); h = np.maximum(X @ W1.T, 0) + V; ht = np.hstack([h, np.ones((N, 1))])
    Pi = ht.T @ ht / N; vals = []
    for _ in range(1000):
        u = ht @ rng.uniform(-1, 1, (K, H + 1)).T; u -= u.max(1, keepdims=True); p = np.exp(u); p /= p.sum(1, keepdims=True)
        F = sum(np.kron(np.diag(p[i]) - np.outer(p[i], p[i]), np.outer(ht[i], ht[i])) for i in range(N)) / N
        vals.append(phi(np.linalg.eigvalsh(F)).sum())
    vals = np.array(vals)
    print(f"   majorant (uniform probabilities) {(K - 1) * phi(np.linalg.eigvalsh(Pi) / K).sum():.1f}, Schur's diagonal "
          f"{(K - 1) * phi(np.diag(Pi) / K).sum():.1f}; at 1 000 random weights: E log G {vals.mean():.1f}, log E G {lme(vals):.1f}, max {vals.max():.1f}")

print("5. Rotfel'd with the hidden states centred (the softmax block's majorant, s = 4.72)")
mubar = np.maximum(X @ rng.uniform(-1, 1, (2000, D + 1)).T, 0).mean()
for rep in range(3):
    W1 = rng.uniform(-1, 1, (H, D + 1)); h = np.maximum(X @ W1.T, 0) + V; ht = np.hstack([h, np.ones((N, 1))])
    Pi = ht.T @ ht / N; f = 1 / K; C = K - 1
    m = h.mean(0); cov = ((h - m) ** 2).mean(0); Dj = ((h - mubar) ** 2).mean(0)
    fixed = min(C * (phi(f * (1 + t) * Dj).sum() + phi(f * (1 + 1 / t) * (1 + H * mubar ** 2))) for t in np.exp(np.linspace(-6, 3, 200)))
    print(f"   eigenvalues {C * phi(f * np.linalg.eigvalsh(Pi)).sum():.1f}, Schur {C * phi(f * np.diag(Pi)).sum():.1f}, "
          f"centred at the sample mean {C * (phi(f * cov).sum() + phi(f * (1 + (m ** 2).sum()))):.1f} (not a product over units), "
          f"at a fixed centre, best t {fixed:.1f}")

print("6. The CNN's second block (conv16k5 on maxpool2(relu(conv8k5) + noise)), c = 0.00265: nats")
with gzip.open('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz') as fh:
    img = np.frombuffer(fh.read(), np.uint8, offset=16).reshape(-1, 28, 28)[:100] / 255.0
S = 100
def patches(a, k):
    return np.stack([a[:, i:i + k, j:j + k, :].reshape(a.shape[0], -1) for i in range(a.shape[1] - k + 1) for j in range(a.shape[2] - k + 1)], 1)
X0 = patches(img[..., None], 5); noise = rng.standard_normal((S, 24, 24, 8)) * math.sqrt(sig2)
layer = lambda W: (np.maximum(X0 @ W.T, 0).reshape(S, 24, 24, 8) + noise).reshape(S, 12, 2, 12, 2, 8).max(axis=(2, 4))
nrow = np.array([sum(1 for r in range(8) for k in range(5) if r + k == i) for i in range(12)]); nq = np.outer(nrow, nrow)
ez2 = ((X0 ** 2).sum(-1) / 3).reshape(S, 24, 24)
M = np.einsum('sabi,ab,sabj->ij', X0.reshape(S, 24, 24, 25), np.repeat(np.repeat(nq, 2, 0), 2, 1), X0.reshape(S, 24, 24, 25))
spread = math.sqrt(np.linalg.eigvalsh(M).max() / (25 * S)) * 2 / math.pi
for tt, name in [(9.99, '1e-3'), (2.15, '0.1')]:
    s = tt * math.sqrt(0.00265); alpha = s / math.sqrt(sig2); phi = lambda l: np.log1p(s * np.sqrt(np.clip(l, 0, None)))
    at = []
    for _ in range(3):
        Y = patches(layer(rng.uniform(-1, 1, (8, 25))), 5); Pi = np.einsum('spi,spj->ij', Y, Y) / S
        at.append((16 * phi(np.linalg.eigvalsh(Pi) / sig2).sum(), 16 * phi(np.diag(Pi) / sig2).sum()))
    total = 0.0
    for c in range(8):
        v = noise[..., c]; eu2 = ez2 / 2 + np.maximum(v, 0) * np.sqrt(ez2) + v ** 2
        mean2 = (nq[None] * eu2.reshape(S, 12, 2, 12, 2).sum(axis=(2, 4))).sum() / (25 * S)
        total += logMoment(400, alpha, math.sqrt(mean2), spread)
    print(f"   eps = {name}: at random first layers, eigenvalues / Schur " + ", ".join(f"{a:.0f} / {b:.0f}" for a, b in at)
          + f"; in the mean (25 offsets x 16 channels per channel, window sums, sub-Gaussian scale {spread:.1f}): {total:.0f}")

print("7. A hidden layer's energy T = (1/S) sum_s |h_s|^2 + 1 (13 relu units) and a Chernoff bound on its tail")
H1 = 13; V1 = rng.standard_normal((N, H1)) * math.sqrt(sig2)
T = np.concatenate([(np.square(np.maximum(np.einsum('sd,khd->ksh', X, rng.uniform(-1, 1, (2000, H1, D + 1))), 0) + V1[None])).sum(-1).mean(-1) + 1
                    for _ in range(10)])
F2 = np.square(np.maximum(rng.uniform(-1, 1, (200000, D + 1)) @ X.T, 0) + V1[:, 0][None]).mean(1)
sg = np.linalg.norm(X, 2) / math.sqrt(N) * 2 / math.pi; mu = math.sqrt(F2.mean())
print(f"   T over {len(T)} draws: mean {T.mean():.1f}, sd {T.std():.1f}, largest {T.max():.1f}; a unit's F: mean {np.sqrt(F2).mean():.2f}, "
      f"sd {np.sqrt(F2).std():.2f}, sub-Gaussian scale {sg:.2f}")
for target in [50, 100, 200]:
    lams = np.linspace(1e-4, 0.999 / (2 * sg * sg), 2000)
    t = min((H1 * (l * mu * mu / (1 - 2 * l * sg * sg) - 0.5 * math.log(1 - 2 * l * sg * sg)) + target) / l + 1 for l in lams)
    print(f"   P(T > t) <= e^-{target} at t = {t:.0f} ({t / T.mean():.1f} times the mean)")
