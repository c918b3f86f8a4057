#!/usr/bin/env python3
"""Exploratory, not pre-registered: the paper's own claim is about models of *equal size*, while the
study's pre-registered statistics rank all 144 models of a data set together. This reads a finished
study folder and, per data set, target and measure, computes Kendall's tau_b over the 12 architectures
of one size group trained with one (learning rate, batch size), oriented as the study orients it (the
training loss negated, the gap kept), on seed means; then the mean over the 3 groups x 4 settings and
how many of those 12 tau are positive, and their range. Usage: lab/scripts/study-within-groups.py GRID.json DIR"""
import glob, json, os, sys
from collections import defaultdict
from scipy.stats import kendalltau

grid = json.load(open(sys.argv[1]))
cells = [json.load(open(p)) for p in glob.glob(os.path.join(sys.argv[2], "cells", "*.json"))]


def notation(a):
    """The cells' notation: an MLP on HxWxC images is written with its flat input size (8x8x1-20-10 → 64-20-10)."""
    head, _, rest = a.partition("-")
    if "x" in head and not any(ch.isalpha() for ch in rest):
        h, w, c = (int(v) for v in head.split("x"))
        return f"{h * w * c}-{rest}"
    return a


for g in grid["groups"]:
    g["architectures"] = [notation(a) for a in g["architectures"]]
fisher = {(c["dataset"], c["architecture"]): c for c in cells if "d_zeta" in c}
runs = defaultdict(list)
for c in cells:
    if "learning_rate" in c:
        runs[(c["dataset"], c["architecture"], c["learning_rate"], c["batch_size"])].append(c)

def mean(xs):
    return sum(xs) / len(xs)

fisher_measures = ["d_zeta", "d_zeta_lower", "generic_rank", "abbas_ed", "parameters"]
trained_measures = ["log_path_norm", "log_spectral_product", "fisher_rao", "flatness"]
print("dataset  target      measure               mean tau  positive/defined  min..max")
for ds in [d["name"] for d in grid["datasets"]]:
    for target in ["train_loss", "gap"]:
        for m in fisher_measures + trained_measures:
            taus = []
            for g in grid["groups"]:
                for lr in grid["learning_rates"]:
                    for b in grid["batch_sizes"]:
                        xs, ys = [], []
                        for a in g["architectures"]:
                            rs = runs[(ds, a, lr, b)]
                            if not rs:
                                continue
                            y = mean([r["train_loss"] for r in rs]) if target == "train_loss" else \
                                mean([r["test_error"] - r["train_error"] for r in rs])
                            x = fisher[(ds, a)][m] if m in fisher_measures else mean([r[m] for r in rs])
                            xs.append(x)
                            ys.append(-y if target == "train_loss" else y)
                        t = kendalltau(xs, ys).statistic if len(set(xs)) > 1 and len(set(ys)) > 1 else float("nan")
                        if t == t:
                            taus.append(t)
            if taus:
                print(f"{ds:8} {target:11} {m:22} {mean(taus):+.3f}    {sum(t > 0 for t in taus):2}/{len(taus)}             {min(taus):+.2f}..{max(taus):+.2f}")
