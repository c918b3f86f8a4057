#!/usr/bin/env python3
"""Trainer throughput in NumPy: the same loop as `twoscale bench-train`.

Per architecture: N synthetic inputs x ~ N(0, I) with uniform random labels, relu hidden layers, no
biases, softmax cross-entropy (mean over the batch), Adam (lr 1e-3, beta1 0.9, beta2 0.999, eps 1e-8),
batch 64, Glorot-uniform init, a fresh shuffle per epoch, float64, no per-epoch evaluation.
samples/second = epochs * N / time spent in the optimisation steps (best of --repeats).

    python3 benchmarks/train_numpy.py [--arch 54-16-7,784-128-10] [--samples 20000] [--epochs 3]

Set OPENBLAS_NUM_THREADS=1 (or OMP_NUM_THREADS=1) to compare with twoscale's single BLAS thread.
"""
import argparse
import json
import time

import numpy as np


def train(sizes, x, y, batch, epochs, seed):
    rng = np.random.default_rng(seed)
    ws = [rng.uniform(-1, 1, (sizes[m + 1], sizes[m])) * np.sqrt(6.0 / (sizes[m] + sizes[m + 1]))
          for m in range(len(sizes) - 1)]
    ms = [np.zeros_like(w) for w in ws]
    vs = [np.zeros_like(w) for w in ws]
    lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-8
    n = x.shape[0]
    t = 0
    elapsed = 0.0
    for _ in range(epochs):
        order = rng.permutation(n)
        for s in range(0, n, batch):
            t0 = time.perf_counter()
            idx = order[s:s + batch]
            xb, yb = x[idx], y[idx]
            acts, pres = [xb], []
            a = xb
            for w in ws[:-1]:
                z = a @ w.T
                pres.append(z)
                a = np.maximum(z, 0)
                acts.append(a)
            logits = a @ ws[-1].T
            logits -= logits.max(axis=1, keepdims=True)
            p = np.exp(logits)
            p /= p.sum(axis=1, keepdims=True)
            bsz = xb.shape[0]
            g = p
            g[np.arange(bsz), yb] -= 1
            g /= bsz
            t += 1
            for m in range(len(ws) - 1, -1, -1):
                dw = g.T @ acts[m]
                if m > 0:
                    g = (g @ ws[m]) * (pres[m - 1] > 0)
                ms[m] = b1 * ms[m] + (1 - b1) * dw
                vs[m] = b2 * vs[m] + (1 - b2) * dw * dw
                ws[m] -= lr * (ms[m] / (1 - b1 ** t)) / (np.sqrt(vs[m] / (1 - b2 ** t)) + eps)
            elapsed += time.perf_counter() - t0
    return elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", default="54-16-7,784-128-10")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--samples", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    out = []
    for text in args.arch.split(","):
        sizes = [int(s) for s in text.split("-")]
        rng = np.random.default_rng(args.seed)
        x = rng.standard_normal((args.samples, sizes[0]))
        y = rng.integers(0, sizes[-1], args.samples)
        best = min(train(sizes, x, y, args.batch, args.epochs, args.seed) for _ in range(args.repeats))
        sps = args.epochs * args.samples / best
        out.append({"arch": text, "batch": args.batch, "epochs": args.epochs, "samples": args.samples,
                    "training_seconds": best, "samples_per_second": sps})
        print(f"{text:>12}  batch {args.batch}  {best:.3f} s  {sps:,.0f} samples/s")
    print(json.dumps({"numpy": np.__version__, "benchmarks": out}, indent=2))


if __name__ == "__main__":
    main()
