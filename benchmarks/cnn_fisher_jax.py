#!/usr/bin/env python3
"""The CNN Fisher / 2sED workload in JAX (CPU, float64): a peer implementation to time twoscale against.

Network (twoscale notation 28x28x1-conv8k5-maxpool2-conv16k5-maxpool2-10, d = 5 960, no biases):
conv 8 filters 5x5 (stride 1, no padding) -> relu -> 2x2 max pool -> conv 16 filters 5x5 -> relu -> 2x2 max
pool -> flatten (height, width, channel) -> dense softmax layer, 10 classes. Data: the first N = 100
Fashion-MNIST training images scaled to [0, 1]. Parameters uniform on the box [-1, 1]^d. Definitions as in
docs/METHOD.md (sections 2-4, 6, 10-13) and Sources/Networks:

* parameter layout (twoscale's): conv filter c is the row w_c of length k*k*C_in in (row, column, channel)
  order, channels fastest; theta_m = the rows one after another; dense W is (out, in) row by row; theta =
  (conv1, conv2, dense). Images and feature maps are stored height x width x channels.
* output route (METHOD.md 12): F = (1/N) sum_n J_n^T (diag p_n - p_n p_n^T) J_n with J_n = d logits / d theta
  from per-sample Jacobians (jax.jacrev, mapped over the samples with lax.map), its nonzero spectrum from the
  N(C-1) x N(C-1) Gram M M^T / N, rows g_{n,a} = J_n^T Lambda_n e_a (Lambda_n: the C x (C-1) factor of
  diag p - p p^T), by jnp.linalg.eigvalsh.
* Markov route (METHOD.md 11), noise v ~ N(0, sigma^2 I) added after every hidden relu (before pooling),
  the same draws for every theta: conv block = one block per filter, sigma^-2 E[J_c^T J_c] with
  J_c = d relu(w_c * x) / d w_c the per-sample Jacobian of the filter's mean output (jax.jacfwd: by default
  d z_c / d w_c once per block input, times relu'(z) per draw; --conv-jacobian per-draw differentiates
  relu(w_c * x) afresh for every filter and draw);
  softmax block = E[(diag p - p p^T) (x) x x^T] as the N(C-1) Gram of the per-sample logit gradients
  contracted with Lambda_n (its nonzero spectrum; the rest are zeros).
* 2sED (METHOD.md 4, 6, 13): trace normalisation c = d / mean_k sum_m Tr F_m(theta^k), zeta = 2/3, a
  30-point log grid eps in [1e-3, 0.5]; nested, joint and lower estimators with K paths and J inner draws
  per layer m >= 2; 95% percentile-bootstrap intervals (200 resamples, twoscale's resampling stream).

Usage (see benchmarks/README.md):

    python3 benchmarks/cnn_fisher_jax.py                      # both routes, K = 100 (J = 100), JSON on stdout
    python3 benchmarks/cnn_fisher_jax.py --route output
    python3 benchmarks/cnn_fisher_jax.py --route markov --paths 10 --inner 10
    python3 benchmarks/cnn_fisher_jax.py --check [--twoscale .build/release/twoscale]

--rng twoscale (the default) draws theta^k, the inner draws and the noise from twoscale's own streams
(xoshiro256** seeded per (seed, path), (seed, path, layer, draw), (seed, sample, draw, layer)), so that the
spectra, and the 2sED, are those of `twoscale ed --seed 1` on the same network; --rng jax uses jax.random.
The time spent drawing is reported apart (seconds.rng), not in seconds.spectra.
"""

import argparse
import functools
import gzip
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

# One OpenBLAS thread (NumPy's and the LAPACK that jaxlib calls for eigvalsh), as twoscale pins it: on a
# busy machine OpenBLAS's spinning threads made eigvalsh up to 100x slower here. XLA's own thread pool
# still parallelises the convolutions and matrix products. Set the variable yourself to override.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ARCH = "28x28x1-conv8k5-maxpool2-conv16k5-maxpool2-10"
FMNIST_IMAGES = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"
CLASSES = 10
# Parameter shapes in twoscale's layout: conv (filters, k, k, C_in) = rows w_c in (row, col, channel) order;
# dense (out, in).
SHAPES = [(8, 5, 5, 1), (16, 5, 5, 8), (10, 256)]
BLOCK_DIMS = [int(np.prod(s)) for s in SHAPES]  # 200, 3200, 2560
D = sum(BLOCK_DIMS)  # 5960
HIDDEN_WIDTHS = [24 * 24 * 8, 8 * 8 * 16]  # outputs of the two relu (noisy) layers, HWC
EPS_GRID = "1e-3:0.5:30"
ZETA = 2.0 / 3.0
NEGATIVE_TOLERANCE = 1e-8  # METHOD.md 2: eigenvalues in [-1e-8 lambda_max, 0) are round-off


# --------------------------------------------------------------------------------------------------
# twoscale's random streams (Sources/Sampling/Random.swift), vectorised over many streams with NumPy.
# --------------------------------------------------------------------------------------------------
_U = np.uint64
_GOLDEN = _U(0x9E3779B97F4A7C15)
_SM1 = _U(0xBF58476D1CE4E5B9)
_SM2 = _U(0x94D049BB133111EB)
_STREAM_MUL = _U(0xD1B54A32D192ED03)
STREAM_WEIGHTS = 0x57454947  # "WEIG": fisher without --weights
STREAM_NOISE = 0x4E4F4953    # "NOIS": MarkovFisher's hidden-layer noise
STREAM_PATH, STREAM_INNER = 1, 2  # MonteCarloDesign


def _splitmix_next(state):
    state = state + _GOLDEN
    z = state
    z = (z ^ (z >> _U(30))) * _SM1
    z = (z ^ (z >> _U(27))) * _SM2
    return state, z ^ (z >> _U(31))


def _rotl(x, k):
    return (x << _U(k)) | (x >> _U(64 - k))


class Xoshiro:
    """xoshiro256** for an array of streams: Xoshiro256(seed:, stream: ids) of twoscale, one per row of ids."""

    def __init__(self, seed, streams):
        ids = np.atleast_2d(np.asarray(streams, dtype=np.uint64))  # (n_streams, len(stream))
        with np.errstate(over="ignore"):
            state = np.full(ids.shape[0], seed, dtype=np.uint64)
            for col in range(ids.shape[1]):
                state, z = _splitmix_next(state)
                state = z ^ (ids[:, col] * _STREAM_MUL)
            s = []
            for _ in range(4):
                state, z = _splitmix_next(state)
                s.append(z)
        zero = (s[0] == 0) & (s[1] == 0) & (s[2] == 0) & (s[3] == 0)
        s[0] = np.where(zero, _U(1), s[0])
        self.s = s

    def next(self):
        s0, s1, s2, s3 = self.s
        with np.errstate(over="ignore"):
            result = _rotl(s1 * _U(5), 7) * _U(9)
        t = s1 << _U(17)
        s2 = s2 ^ s0
        s3 = s3 ^ s1
        s1 = s1 ^ s2
        s0 = s0 ^ s3
        s2 = s2 ^ t
        s3 = _rotl(s3, 45)
        self.s = [s0, s1, s2, s3]
        return result

    def uniform(self):
        return (self.next() >> _U(11)).astype(np.float64) * 2.0 ** -53

    def uniform_matrix(self, count, lo, hi):
        out = np.empty((self.s[0].shape[0], count))
        for i in range(count):
            out[:, i] = lo + (hi - lo) * self.uniform()
        return out

    def normal_matrix(self, count):
        """Box-Muller pairs as Xoshiro256.normal() hands them out: r cos a, then the cached r sin a."""
        out = np.empty((self.s[0].shape[0], count))
        for i in range(0, count, 2):
            u1 = 1.0 - self.uniform()
            u2 = self.uniform()
            r = np.sqrt(-2.0 * np.log(u1))
            a = 2.0 * math.pi * u2
            out[:, i] = r * np.cos(a)
            if i + 1 < count:
                out[:, i + 1] = r * np.sin(a)
        return out


def twoscale_path_thetas(seed, paths, box):
    """theta^k of MonteCarloDesign.network: stream [1, k], all d parameters in layout order. (K, d)."""
    ids = [[STREAM_PATH, k] for k in paths]
    return Xoshiro(seed, ids).uniform_matrix(D, box[0], box[1])


def twoscale_inner_thetas(seed, paths, block, draws, box):
    """Inner draw j of block m (0-based) at path k: stream [2, k, m, j]. (len(paths), draws, d_m)."""
    ids = [[STREAM_INNER, k, block, j] for k in paths for j in range(draws)]
    u = Xoshiro(seed, ids).uniform_matrix(BLOCK_DIMS[block], box[0], box[1])
    return u.reshape(len(paths), draws, BLOCK_DIMS[block])


def twoscale_noise(seed, n, sigma2, noise_samples=1):
    """sigma * v for each hidden layer m: stream [NOIS, n, r, m], row n*R + r, HWC order."""
    out = []
    for m, width in enumerate(HIDDEN_WIDTHS):
        ids = [[STREAM_NOISE, i, r, m] for i in range(n) for r in range(noise_samples)]
        out.append(math.sqrt(sigma2) * Xoshiro(seed, ids).normal_matrix(width))
    return out


def split_theta(theta):
    """Flat theta (twoscale layout) -> the three weight arrays."""
    out, off = [], 0
    for shape, n in zip(SHAPES, BLOCK_DIMS):
        out.append(np.asarray(theta[off:off + n]).reshape(shape))
        off += n
    return out


# --------------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------------
def load_fashion_mnist(n, path=FMNIST_IMAGES):
    with gzip.open(path, "rb") as f:
        header = np.frombuffer(f.read(16), dtype=">u4")
        if header[0] != 2051:
            raise SystemExit(f"{path}: not an IDX image file (magic {header[0]})")
        count, rows, cols = (int(v) for v in header[1:])
        if n > count:
            raise SystemExit(f"{path} has only {count} images")
        raw = np.frombuffer(f.read(n * rows * cols), dtype=np.uint8)
    return (raw.astype(np.float64) / 255.0).reshape(n, rows, cols, 1)


# --------------------------------------------------------------------------------------------------
# The model and the Fisher spectra in JAX
# --------------------------------------------------------------------------------------------------
def build(jax, jnp, lax):
    """The JAX functions of the workload (closures over the jax modules, imported by main)."""

    def conv(x, w):  # x (N, H, W, C_in), w (C_out, k, k, C_in): cross-correlation as twoscale's im2col
        return lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=("NHWC", "OHWI", "NHWC"),
                                        precision=lax.Precision.HIGHEST)

    def pool(x):  # 2x2 max pooling, stride 2
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    relu = jax.nn.relu  # relu'(0) = 0, as twoscale

    def logits_one(params, x):  # one image (28, 28, 1) -> 10 logits
        w1, w2, w3 = params
        h = pool(relu(conv(x[None], w1)))
        h = pool(relu(conv(h, w2)))
        return w3 @ h.reshape(-1)  # flatten in (height, width, channel) order

    def softmax_factor(p):
        """Lambda (.., C, C-1) with Lambda Lambda^T = diag p - p p^T: twoscale's Householder factor
        (SoftmaxCovariance.factor), which stays accurate for a saturated softmax."""
        c = p.shape[-1]
        k = jnp.argmax(p, axis=-1)  # first largest
        pk = jnp.take_along_axis(p, k[..., None], axis=-1)[..., 0]
        sk = jnp.sqrt(pk)
        g = sk / (1 + sk)
        eye = jnp.eye(c, dtype=p.dtype)
        ek = jax.nn.one_hot(k, c, dtype=p.dtype)
        h = g[..., None] * (ek - p)  # (.., C) over rows c
        full = jnp.sqrt(p)[..., None, :] * (eye - p[..., :, None] - h[..., :, None])  # [c, j]
        cols = jnp.arange(c - 1)
        j = cols[None, :] + (cols[None, :] >= k.reshape(-1, 1))  # the columns j != k, in order
        j = j.reshape(p.shape[:-1] + (c - 1,))
        return jnp.take_along_axis(full, j[..., None, :], axis=-1)

    def gram_spectrum(jac, p):
        """Nonzero spectrum of (1/N) sum_n J_n^T (diag p_n - p_n p_n^T) J_n, J (N, C, d), from the
        N(C-1) Gram of the rows g_{n,a} = J_n^T Lambda_n e_a."""
        n = jac.shape[0]
        lam = softmax_factor(p)  # (N, C, C-1)
        m = jnp.einsum("nca,ncd->nad", lam, jac).reshape(n * (p.shape[-1] - 1), jac.shape[-1])
        return jnp.linalg.eigvalsh(m @ m.T / n)

    # ---- output FIM ----
    def output_spectrum(params, x):
        n = x.shape[0]
        # Per-sample Jacobians d logits(x_n) / d theta. lax.map, not jax.vmap: vmapping the weight gradient
        # of a convolution over samples becomes a grouped convolution that XLA's CPU backend runs ~30x slower
        # (and with GiBs of scratch memory).
        jac = lax.map(lambda xs: jax.jacrev(logits_one)(params, xs), x)  # tuple of (N, C, ...)
        jac = jnp.concatenate([j.reshape(n, CLASSES, -1) for j in jac], axis=2)  # (N, C, d), layout order
        p = jax.nn.softmax(jax.vmap(logits_one, in_axes=(None, 0))(params, x))
        return gram_spectrum(jac, p)  # N(C-1) eigenvalues, ascending

    # ---- Markov FIM ----
    def hidden_inputs(w1, w2, x, noise0, noise1):
        """Inputs of blocks 2 and 3: x_m = act(z) + sigma v (noise before the pooling)."""
        n = x.shape[0]
        h1 = pool(relu(conv(x, w1)) + noise0.reshape(n, 24, 24, 8))
        h2 = pool(relu(conv(h1, w2)) + noise1.reshape(n, 8, 8, 16))
        return h1, h2.reshape(n, -1)

    def filter_jacobian(wc, x):
        """d mu_c / d w_c for every (sample, position): jax.jacfwd of the filter's mean output
        mu_c = relu(w_c * x) over the batch, ((S*P), k*k*C_in)."""
        jac = jax.jacfwd(lambda w: relu(conv(x, w[None]))[..., 0])(wc)  # (S, oh, ow, k, k, C_in)
        return jac.reshape(-1, wc.size)

    def patch_jacobian(x, k):
        """d z_c / d w_c of the (linear) pre-activation, the same for every filter and every theta_m: jax.jacfwd
        of a one-filter convolution, ((S*P), k*k*C_in) (the receptive fields)."""
        shape = (k, k, x.shape[-1])
        jac = jax.jacfwd(lambda w: conv(x, w[None])[..., 0])(jnp.zeros(shape, x.dtype))
        return jac.reshape(-1, shape[0] * shape[1] * shape[2])

    def conv_block_spectrum(w, x, patches, sigma2):
        """Per filter c the eigenvalues of sigma^-2 (1/S) sum_s J_{s,c}^T J_{s,c}, J_{s,c} = d mu_c(x_s) / d w_c
        (P x k^2 C_in): (filters, k^2 C_in). With `patches` (the Jacobian of the pre-activation, computed once
        per block input) J = relu'(z) * patches; without, jax.jacfwd of relu(w_c * x) per filter and draw."""
        s, f = x.shape[0], w.shape[0]
        if patches is None:
            blocks = lax.map(lambda wc: (lambda y: y.T @ y)(filter_jacobian(wc, x)), w)
        else:
            z = conv(x, w).reshape(-1, f)  # rows (sample, position)
            d2 = (z > 0).astype(x.dtype)  # relu'(z)^2 (relu'(0) = 0)
            blocks = jnp.einsum("rf,ri,rj->fij", d2, patches, patches)
        return jnp.linalg.eigvalsh(blocks / (sigma2 * s))

    def softmax_block_spectrum(w3, x):
        """Nonzero spectrum of E[(diag p - p p^T) (x) x x^T] (N(C-1) values) from per-sample gradients of
        the logits w.r.t. W_L."""
        jac = jax.vmap(jax.jacrev(lambda w, xs: w @ xs), in_axes=(None, 0))(w3, x)  # (S, C, C, n_in)
        jac = jac.reshape(x.shape[0], CLASSES, -1)
        p = jax.nn.softmax(x @ w3.T)
        return gram_spectrum(jac, p)

    def markov_path(w1, w2, w3, inner_w2, inner_w3, x, noise0, noise1, sigma2, hoist=True):
        """Own spectra of the three blocks at theta^k and the spectra of the J inner draws of blocks 2, 3
        (their inputs depend on theta_{<m} only: computed once, as twoscale does)."""
        p1 = patch_jacobian(x, w1.shape[1]) if hoist else None
        own1 = conv_block_spectrum(w1, x, p1, sigma2).reshape(-1)
        h1, x3 = hidden_inputs(w1, w2, x, noise0, noise1)
        p2 = patch_jacobian(h1, w2.shape[1]) if hoist else None
        own2 = conv_block_spectrum(w2, h1, p2, sigma2).reshape(-1)
        own3 = softmax_block_spectrum(w3, x3)
        in2 = lax.map(lambda w: conv_block_spectrum(w, h1, p2, sigma2).reshape(-1), inner_w2)
        in3 = lax.map(lambda w: softmax_block_spectrum(w, x3), inner_w3)
        return own1, own2, own3, in2, in3

    def markov_blocks(w1, w2, w3, x, noise0, noise1, sigma2, hoist=True):
        own1 = conv_block_spectrum(w1, x, patch_jacobian(x, w1.shape[1]) if hoist else None, sigma2).reshape(-1)
        h1, x3 = hidden_inputs(w1, w2, x, noise0, noise1)
        own2 = conv_block_spectrum(w2, h1, patch_jacobian(h1, w2.shape[1]) if hoist else None, sigma2).reshape(-1)
        return own1, own2, softmax_block_spectrum(w3, x3)

    return {"output_spectrum": output_spectrum, "markov_path": markov_path, "markov_blocks": markov_blocks}


# --------------------------------------------------------------------------------------------------
# Estimators (METHOD.md 3, 4, 6, 13) in NumPy, on the stored spectra
# --------------------------------------------------------------------------------------------------
def log_grid(text):
    lo, hi, n = text.split(":")
    lo, hi, n = float(lo), float(hi), int(n)
    a, b = math.log(lo), math.log(hi)
    return [lo] + [math.exp(a + (b - a) * i / (n - 1)) for i in range(1, n - 1)] + [hi]


def clamp_to_roots(values, scale):
    """METHOD.md 2, in place: values (..., r) become the square roots of the eigenvalues, round-off
    negatives (in [-1e-8 lambda_max, 0), lambda_max = max(|values|, scale)) set to 0. Returns the traces
    (...) and the count clamped; raises on a clearly negative or non-finite eigenvalue."""
    if not np.all(np.isfinite(values)):
        raise RuntimeError("non-finite eigenvalue")
    lmax = np.maximum(np.abs(values).max(axis=-1), scale)
    if np.any(values < -NEGATIVE_TOLERANCE * lmax[..., None]):
        worst = (values / lmax[..., None]).min()
        raise RuntimeError(f"clearly negative eigenvalue ({worst:.3g} of lambda_max)")
    clamped = int(np.count_nonzero(values < 0))
    np.maximum(values, 0.0, out=values)
    traces = values.sum(axis=-1)
    np.sqrt(values, out=values)
    return traces, clamped


def log_det_sqrt(roots, s):
    """sum_i log1p(s sqrt(lambda_i)) over the last axis, one leading index at a time (no big temporaries)."""
    return np.stack([np.log1p(s * r).sum(axis=-1) for r in roots])


def logsumexp(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    return (m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))).squeeze(axis)


def splitmix_resamples(seed, paths, count):
    """twoscale's bootstrap resamples (LayeredEstimator.resamples): SplitMix64(seed ^ 0x25EDB007)."""
    state, mask, out = (seed ^ 0x25EDB007) & 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, []
    for _ in range(count):
        idx = []
        for _ in range(paths):
            state = (state + 0x9E3779B97F4A7C15) & mask
            z = state
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
            idx.append((z ^ (z >> 31)) % paths)
        out.append(idx)
    return np.array(out, dtype=np.int64)


def estimate(own, inner, eps_grid, zeta, bootstrap=200, seed=1):
    """own[m]: (K, r_m) raw eigenvalues of F_m(theta^k); inner[m]: (K, J, r_m) for m >= 1 (None for m = 0).
    Returns the points (nested, joint, lower, ess, 95% intervals) and the normalisation. The arrays are
    overwritten by the square roots of the clamped eigenvalues (the store is the largest thing held)."""
    n_blocks = len(own)
    k_paths = own[0].shape[0]
    scale = np.max([np.abs(o).max(axis=1) for o in own], axis=0)  # lambda_max of the path's whole F
    traces, clamped = np.zeros(k_paths), 0
    for m in range(n_blocks):
        if m >= 1:  # before the own block's values become roots: its scale is already taken
            clamped += clamp_to_roots(inner[m], scale[:, None])[1]
        t, c = clamp_to_roots(own[m], scale)
        traces += t
        clamped += c
    roots_own, roots_inner = own, inner
    mean_trace = traces.mean()
    c_norm = D / mean_trace if mean_trace > 0 else 0.0
    resamples = splitmix_resamples(seed, k_paths, bootstrap) if bootstrap > 1 else None

    def stages(a, lim, idx):
        first = a[0][idx]
        log_i1 = logsumexp(first) - math.log(len(idx))
        nested = lower = log_i1
        cum = first.copy()
        ess = []
        for m in range(1, n_blocks):
            lw = cum - logsumexp(cum)
            li = lim[m][idx]
            nested += logsumexp(lw + li)
            lower += np.sum(np.exp(lw) * li)
            w = np.exp(lw)
            ess.append(1.0 / np.sum(w * w))
            cum = cum + a[m][idx]
        joint = logsumexp(cum) - math.log(len(idx))
        return nested, joint, lower, ess

    points = []
    for e in eps_grid:
        s = e ** (zeta - 1) * math.sqrt(c_norm)
        a = [log_det_sqrt(r, s) for r in roots_own]  # A_m(k)
        lim = [None] + [logsumexp(log_det_sqrt(r, s), axis=1) - math.log(r.shape[1])
                        for r in roots_inner[1:]]  # log I_m^k
        f = lambda v: zeta * D + v / abs(math.log(e))  # noqa: E731
        nested, joint, lower, ess = stages(a, lim, np.arange(k_paths))
        pt = {"eps": e, "d_zeta": f(nested), "d_zeta_joint": f(joint), "d_zeta_lower": f(lower), "ess": ess}
        if resamples is not None:
            reps = np.array([[f(v) for v in stages(a, lim, idx)[:3]] for idx in resamples])
            q = lambda col: [float(np.quantile(reps[:, col], 0.025)), float(np.quantile(reps[:, col], 0.975))]  # noqa: E731
            pt.update({"ci95": q(0), "ci95_joint": q(1), "ci95_lower": q(2)})
        points.append(pt)
    return points, {"mean_trace": mean_trace, "c": c_norm, "clamped": clamped}


# --------------------------------------------------------------------------------------------------
# Runs
# --------------------------------------------------------------------------------------------------
def peak_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def make_draws(args, jax, route, paths, inner):
    """theta^k (K, d); for markov also the noise and `inner(k)`: path k's inner draws of blocks 2 and 3,
    [(J, d_2), (J, d_3)], drawn when the path is computed (all K*J of them would be 460 MB)."""
    box = (args.box_lo, args.box_hi)
    out = {}
    if args.rng == "twoscale":
        out["thetas"] = twoscale_path_thetas(args.seed, list(range(paths)), box)
        if route == "markov":
            out["inner"] = lambda k: [twoscale_inner_thetas(args.seed, [k], m, inner, box)[0] for m in (1, 2)]
            out["noise"] = twoscale_noise(args.seed, args.samples, args.sigma2)
        return out
    key = jax.random.PRNGKey(args.seed)
    uni = lambda k, shape: np.asarray(jax.random.uniform(k, shape, minval=box[0], maxval=box[1]))  # noqa: E731
    out["thetas"] = uni(jax.random.fold_in(key, 1), (paths, D))
    if route == "markov":
        out["inner"] = lambda k: [uni(jax.random.fold_in(jax.random.fold_in(key, 2 + m), k), (inner, BLOCK_DIMS[m]))
                                  for m in (1, 2)]
        out["noise"] = [math.sqrt(args.sigma2) * np.asarray(jax.random.normal(jax.random.fold_in(key, 100 + m), (args.samples, w)))
                        for m, w in enumerate(HIDDEN_WIDTHS)]
    return out


def output_spectra(jax, jnp, fns, x, thetas, report=None):
    """The output-FIM spectra of every theta^k: (K, N(C-1)); compile and compute seconds."""
    xj = jnp.asarray(x)
    params = lambda k: tuple(jnp.asarray(w) for w in split_theta(thetas[k]))  # noqa: E731
    t0 = time.perf_counter()
    compiled = jax.jit(fns["output_spectrum"]).lower(params(0), xj).compile()
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    spectra = []
    for k in range(len(thetas)):
        spectra.append(np.asarray(compiled(params(k), xj)))
        if report:
            report(k + 1, len(thetas), t0)
    return np.stack(spectra), compile_s, time.perf_counter() - t0


def markov_spectra(jax, jnp, fns, x, draws, sigma2, hoist, report=None):
    """The Markov spectra: own[m] (K, r_m) and inner[m] (K, J, r_m) for m = 1, 2; compile, compute and
    inner-draw seconds (the last not included in the compute seconds)."""
    thetas, noise = draws["thetas"], draws["noise"]
    xj, nz, sig = jnp.asarray(x), [jnp.asarray(v) for v in noise], jnp.asarray(sigma2)
    rng_s = 0.0

    def call_args(k):
        nonlocal rng_s
        t = time.perf_counter()
        in2, in3 = draws["inner"](k)
        rng_s += time.perf_counter() - t
        w1, w2, w3 = (jnp.asarray(w) for w in split_theta(thetas[k]))
        j = in2.shape[0]
        return (w1, w2, w3, jnp.asarray(in2.reshape((j,) + SHAPES[1])), jnp.asarray(in3.reshape((j,) + SHAPES[2])),
                xj, nz[0], nz[1], sig)

    t0 = time.perf_counter()
    compiled = jax.jit(functools.partial(fns["markov_path"], hoist=hoist)).lower(*call_args(0)).compile()
    compile_s = time.perf_counter() - t0
    n_paths = len(thetas)
    own, inn = None, None
    rng_s = 0.0
    t0 = time.perf_counter()
    for k in range(n_paths):
        o1, o2, o3, i2, i3 = compiled(*call_args(k))
        if own is None:  # filled in place: no second copy of the store
            own = [np.empty((n_paths,) + v.shape) for v in (o1, o2, o3)]
            inn = [None] + [np.empty((n_paths,) + v.shape) for v in (i2, i3)]
        for arr, v in zip(own + inn[1:], (o1, o2, o3, i2, i3)):
            arr[k] = np.asarray(v)
        if report:
            report(k + 1, n_paths, t0)
    spectra_s = time.perf_counter() - t0 - rng_s
    return own, inn, compile_s, spectra_s, rng_s


def summary(points, norm):
    keys = ("eps", "d_zeta", "d_zeta_joint", "d_zeta_lower", "ci95", "ci95_lower", "ess")
    pick = lambda p: {k: p[k] for k in keys if k in p}  # noqa: E731
    return {"smallest_eps": pick(points[0]), "check_point": pick(points[15] if len(points) > 15 else points[len(points) // 2]),
            "largest_eps": pick(points[-1]), "mean_trace": norm["mean_trace"], "c": norm["c"], "clamped": norm["clamped"]}


def run_route(args, jax, jnp, fns, route):
    wall0 = time.perf_counter()
    t0 = time.perf_counter()
    x = load_fashion_mnist(args.samples)
    data_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    draws = make_draws(args, jax, route, args.paths, args.inner)
    rng_s = time.perf_counter() - t0
    report = None if args.quiet else (lambda done, total, t: progress(route, done, total, t))
    if route == "output":
        spec, compile_s, spectra_s = output_spectra(jax, jnp, fns, x, draws["thetas"], report)
        own, inner = [spec], [None]
    else:
        own, inner, compile_s, spectra_s, inner_rng_s = markov_spectra(jax, jnp, fns, x, draws, args.sigma2,
                                                                        args.conv_jacobian == "hoisted", report)
        rng_s += inner_rng_s
    t0 = time.perf_counter()
    points, norm = estimate(own, inner, log_grid(args.eps), ZETA, args.bootstrap, args.seed)
    est_s = time.perf_counter() - t0
    wall = time.perf_counter() - wall0
    res = {"route": route, "arch": ARCH, "dimension": D, "samples": args.samples, "paths": args.paths}
    if route == "markov":
        res.update({"inner": args.inner, "sigma2": args.sigma2, "layers": BLOCK_DIMS, "conv_jacobian": args.conv_jacobian})
    else:
        res["eigenvalues_per_path"] = int(own[0].shape[1])
    res["seconds"] = {
        "wall_after_import": wall, "data": data_s, "rng": rng_s, "compile": compile_s, "spectra": spectra_s,
        "spectra_per_path": spectra_s / args.paths, "estimators": est_s,
        "wall_without_compile_and_rng": wall - compile_s - rng_s,
    }
    res["peak_rss_bytes"] = peak_rss_bytes()
    res.update(summary(points, norm))
    if args.points:
        res["points"] = points
    return res


def progress(what, done, total, t0):
    el = time.perf_counter() - t0
    eta = el / done * (total - done)
    print(f"\r{what}: path {done}/{total}, {el:.1f} s, ETA {eta:.0f} s   ", end="" if done < total else "\n",
          file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------------
# --check: spectra and 2sED against the twoscale binary
# --------------------------------------------------------------------------------------------------
def write_weights_npz(path, theta, layout="twoscale"):
    """theta as positional arrays np.savez(f, W1, W2, W3). twoscale layout: a conv layer as its filter rows,
    (filters, k*k*C_in) in (row, column, channel) order; dense (out, in) with inputs in (height, width, channel)
    order. pytorch layout: Conv2d (filters, C_in, k, k) and the dense columns in PyTorch's (channel, height,
    width) flattening, which twoscale permutes when it sees 4-D convolution weights."""
    w1, w2, w3 = split_theta(theta)
    if layout == "twoscale":
        np.savez(path, w1.reshape(w1.shape[0], -1), w2.reshape(w2.shape[0], -1), w3)
    else:
        np.savez(path, w1.transpose(0, 3, 1, 2), w2.transpose(0, 3, 1, 2),
                 w3.reshape(CLASSES, 4, 4, 16).transpose(0, 3, 1, 2).reshape(CLASSES, -1))


def run_twoscale(binary, argv):
    t0 = time.perf_counter()
    res = subprocess.run([binary] + argv, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        err = res.stderr.strip()
        crash = err.find("Program crashed")
        if crash >= 0:  # a Swift crash report: keep its first lines (the reason and the frame)
            err = "\n".join(l for l in err[crash:].splitlines()[:40] if l.strip() and ("crashed" in l or " at /" in l))
        return None, f"exit {res.returncode}: {err[:2000]}", wall
    return json.loads(res.stdout), None, wall


def compare(ours, theirs):
    """Sorted eigenvalues (zeros padded to the same length): the largest difference relative to lambda_max,
    and relative to the eigenvalue itself over the eigenvalues above 1e-6 lambda_max."""
    a = np.sort(np.maximum(np.asarray(ours, dtype=float).ravel(), 0.0))
    b = np.sort(np.maximum(np.asarray(theirs, dtype=float).ravel(), 0.0))
    n = max(a.size, b.size)
    a = np.concatenate([np.zeros(n - a.size), a])
    b = np.concatenate([np.zeros(n - b.size), b])
    lmax = max(a.max(), b.max())
    diff = np.abs(a - b)
    big = b > 1e-6 * lmax
    rel = diff[big] / b[big]
    return {"max_rel_diff": float(rel.max()) if rel.size else 0.0,
            "max_abs_diff_over_lambda_max": float(diff.max() / lmax) if lmax > 0 else 0.0,
            "compared": int(big.sum()), "lambda_max": float(lmax)}


def worst(entries):
    return {"max_rel_diff": max(e["max_rel_diff"] for e in entries),
            "max_abs_diff_over_lambda_max": max(e["max_abs_diff_over_lambda_max"] for e in entries),
            "spectra_compared": len(entries)}


def check_fisher(args, jax, jnp, fns, x):
    """One theta (twoscale fisher's own draw for --seed, stream "WEIG") through `twoscale fisher --weights`."""
    theta = Xoshiro(args.seed, [[STREAM_WEIGHTS]]).uniform_matrix(D, -1.0, 1.0)[0]
    noise = twoscale_noise(args.seed, args.samples, args.sigma2)
    w1, w2, w3 = (jnp.asarray(w) for w in split_theta(theta))
    ours = {"output": [np.asarray(jax.jit(fns["output_spectrum"])((w1, w2, w3), jnp.asarray(x)))]}
    mk = jax.jit(functools.partial(fns["markov_blocks"], hoist=args.conv_jacobian == "hoisted"))
    ours["markov"] = [np.asarray(v) for v in mk(w1, w2, w3, jnp.asarray(x), jnp.asarray(noise[0]),
                                                jnp.asarray(noise[1]), jnp.asarray(args.sigma2))]
    tmp = tempfile.mkdtemp(prefix="cnn-fisher-check-")
    out = {}
    try:
        for layout in ("twoscale", "pytorch"):
            npz = os.path.join(tmp, f"theta-{layout}.npz")
            write_weights_npz(npz, theta, layout)
            for fisher in ("output", "markov"):
                argv = ["fisher", "--arch", ARCH, "--data", "fashion-mnist", "--samples", str(args.samples),
                        "--fisher", fisher, "--seed", str(args.seed), "--weights", npz, "--json"]
                if fisher == "markov":
                    argv += ["--sigma2", repr(args.sigma2)]
                res, err, wall = run_twoscale(args.twoscale, argv)
                name = f"{fisher}_weights_{layout}"
                if res is None:
                    out[name] = {"error": err, "command": " ".join(argv)}
                    continue
                blocks = [compare(o, b["eigenvalues"]) for o, b in zip(ours[fisher], res["blocks"])]
                out[name] = {"blocks": blocks, **worst(blocks), "twoscale_seconds": wall}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def check_ed(args, jax, jnp, fns, x, route):
    """`twoscale ed --store` on a few paths: every stored spectrum (own and inner) against ours, computed from
    the same streams, and the 2sED points (nested, joint, lower, intervals) of its report against ours."""
    k, j = args.check_paths, args.check_inner
    tmp = tempfile.mkdtemp(prefix="cnn-ed-check-")
    try:
        store = os.path.join(tmp, "store")
        argv = ["ed", "--arch", ARCH, "--data", "fashion-mnist", "--samples", str(args.samples), "--fisher", route,
                "--paths", str(k), "--seed", str(args.seed), "--eps", args.eps, "--lower",
                "--bootstrap", str(args.bootstrap), "--store", store, "--json"]
        if route == "markov":
            argv += ["--inner", str(j), "--sigma2", repr(args.sigma2)]
        res, err, wall = run_twoscale(args.twoscale, argv)
        if res is None:
            return {"error": err, "command": " ".join(argv)}
        sub = argparse.Namespace(**{**vars(args), "rng": "twoscale"})
        draws = make_draws(sub, jax, route, k, j)
        if route == "output":
            spec, _, _ = output_spectra(jax, jnp, fns, x, draws["thetas"])
            own, inner = [spec], [None]
        else:
            own, inner, _, _, _ = markov_spectra(jax, jnp, fns, x, draws, args.sigma2, args.conv_jacobian == "hoisted")
        entries = []
        for m in range(len(own)):
            theirs = np.load(os.path.join(store, f"own_{m + 1}.npy"))
            entries += [compare(own[m][p], theirs[p]) for p in range(k)]
            if m >= 1:
                theirs = np.load(os.path.join(store, f"inner_{m + 1}.npy"))
                entries += [compare(inner[m][p, q], theirs[p, q]) for p in range(k) for q in range(j)]
        points, _ = estimate(own, inner, log_grid(args.eps), ZETA, args.bootstrap, args.seed)
        diffs = {}
        for key in ("d_zeta", "d_zeta_joint", "d_zeta_lower", "ci95", "ci95_lower"):
            d = [np.max(np.abs(np.subtract(p[key], q[key]))) for p, q in zip(points, res["points"]) if q.get(key) is not None]
            diffs[key] = float(max(d)) if d else None
        return {"command": " ".join(argv), "twoscale_seconds": wall, "spectra": worst(entries),
                "max_abs_diff_of_2sed_points": diffs,
                "d_zeta_at_smallest_eps": [points[0]["d_zeta"], res["points"][0]["d_zeta"]],
                "d_zeta_at_largest_eps": [points[-1]["d_zeta"], res["points"][-1]["d_zeta"]]}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_check(args, jax, jnp, fns):
    waited = 0
    while not (os.path.isfile(args.twoscale) and os.access(args.twoscale, os.X_OK)):
        if waited >= args.wait:
            raise SystemExit(f"--check: no twoscale binary at {args.twoscale} (waited {waited} s); give --twoscale PATH")
        print(f"--check: waiting for {args.twoscale} ...", file=sys.stderr)
        time.sleep(30)
        waited += 30
    x = load_fashion_mnist(args.samples)
    report = {"arch": ARCH, "samples": args.samples, "sigma2": args.sigma2, "seed": args.seed, "twoscale": args.twoscale,
              "tolerance": args.tolerance}
    report["fisher"] = check_fisher(args, jax, jnp, fns, x)
    report["ed"] = {route: check_ed(args, jax, jnp, fns, x, route) for route in ("output", "markov")}
    # Pass: every comparison that ran agrees within the tolerance, and each route was compared at least once
    # (a crash of `twoscale fisher` on one route is reported, not fatal, when `ed` covers that route).
    rel = []
    covered = {"output": False, "markov": False}
    for name, entry in report["fisher"].items():
        if "error" not in entry:
            rel.append(entry["max_rel_diff"])
            covered[name.split("_")[0]] = True
    for route, entry in report["ed"].items():
        if "error" not in entry:
            rel.append(entry["spectra"]["max_rel_diff"])
            covered[route] = True
    report["max_rel_diff"] = max(rel) if rel else None
    report["pass"] = bool(rel) and all(covered.values()) and max(rel) <= args.tolerance
    return report


# --------------------------------------------------------------------------------------------------
def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--route", choices=["output", "markov", "both"], default="both",
                    help="which Fisher route to run (both: each in its own process, so peak memory is per route)")
    ap.add_argument("--samples", type=int, default=100, help="N, the first N Fashion-MNIST training images")
    ap.add_argument("--paths", type=int, default=100, help="K, parameter draws")
    ap.add_argument("--inner", type=int, default=100, help="J, inner draws per path for blocks 2 and 3 (markov)")
    ap.add_argument("--sigma2", type=float, default=0.1, help="noise variance of the hidden layers (markov)")
    ap.add_argument("--eps", default=EPS_GRID, help="log grid lo:hi:n (twoscale's syntax)")
    ap.add_argument("--bootstrap", type=int, default=200, help="bootstrap resamples for the 95%% intervals (0: none)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--box-lo", type=float, default=-1.0)
    ap.add_argument("--box-hi", type=float, default=1.0)
    ap.add_argument("--rng", choices=["twoscale", "jax"], default="twoscale",
                    help="twoscale: the draws of `twoscale ed --seed S` (same spectra); jax: jax.random")
    ap.add_argument("--conv-jacobian", choices=["hoisted", "per-draw"], default="hoisted",
                    help="markov conv blocks: hoisted = d z/d w_c (jax.jacfwd) once per block input, times relu'(z) per "
                         "draw; per-draw = jax.jacfwd of relu(w_c * x) for every filter and draw (~3x the work)")
    ap.add_argument("--points", action="store_true", help="include every epsilon point in the JSON")
    ap.add_argument("--quiet", action="store_true", help="no progress on stderr")
    ap.add_argument("--check", action="store_true", help="compare spectra and 2sED with the twoscale binary")
    ap.add_argument("--twoscale", default=".build/release/twoscale", help="the twoscale binary (--check)")
    ap.add_argument("--check-paths", type=int, default=2, help="--check: K of the `twoscale ed` comparison")
    ap.add_argument("--check-inner", type=int, default=2, help="--check: J of the `twoscale ed` comparison")
    ap.add_argument("--wait", type=int, default=0, help="--check: seconds to wait for the binary to appear")
    ap.add_argument("--tolerance", type=float, default=1e-8,
                    help="--check: largest relative eigenvalue difference (eigenvalues above 1e-6 lambda_max)")
    return ap.parse_args(argv)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.route == "both" and not args.check:
        # One process per route: ru_maxrss is a per-process peak.
        results = []
        for route in ("output", "markov"):
            res = subprocess.run([sys.executable, os.path.abspath(__file__)] + argv + ["--route", route],
                                 stdout=subprocess.PIPE, text=True)
            if res.returncode != 0:
                raise SystemExit(f"the {route} run failed (exit {res.returncode})")
            results.append(json.loads(res.stdout))
        print(json.dumps({"runs": results}, indent=1))
        return

    t_import = time.perf_counter()
    import jax
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    import jax.numpy as jnp
    from jax import lax
    import_s = time.perf_counter() - t_import
    fns = build(jax, jnp, lax)
    env = {"jax": jax.__version__, "devices": [str(d) for d in jax.devices()], "cpu_count": os.cpu_count(),
           "jax_import_seconds": import_s, "loadavg_at_start": os.getloadavg(), "rng": args.rng,
           "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"), "XLA_FLAGS": os.environ.get("XLA_FLAGS")}
    result = run_check(args, jax, jnp, fns) if args.check else run_route(args, jax, jnp, fns, args.route)
    env["loadavg_at_end"] = os.getloadavg()
    result["environment"] = env
    print(json.dumps(result, indent=1))
    if args.check and not result["pass"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
