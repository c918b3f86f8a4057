#!/usr/bin/env python3
"""Tallies a CSV written by lab/scripts/multi-stage-rule.py against the precision issue's acceptance for exact
cases: per ε, over the seeds in it, how often the reported interval and the 95% sampled interval hold the exact
2sED and lower 2sED, the reported interval's median width (% of the exact value), and the estimates' mean error
(% and units) with its standard error.
Usage: lab/scripts/seed-tally.py SEEDS.csv"""
import csv, statistics, sys

rows = list(csv.DictReader(open(sys.argv[1])))
for eps in sorted({r["eps"] for r in rows}, key=float):
    rs = [r for r in rows if r["eps"] == eps]
    f = lambda r, k: float(r[k])
    n = len(rs)
    held = sum(f(r, "lo") <= f(r, "exact") <= f(r, "hi") for r in rs)
    held_ci = sum(f(r, "ci_lo") <= f(r, "exact") <= f(r, "ci_hi") for r in rs)
    held_low = sum(f(r, "lower_lo") <= f(r, "exact_lower") <= f(r, "lower_hi") for r in rs)
    held_ci_low = sum(f(r, "ci_lower_lo") <= f(r, "exact_lower") <= f(r, "ci_lower_hi") for r in rs)
    widths = [100 * (f(r, "hi") - f(r, "lo")) / f(r, "exact") for r in rs]
    err = [f(r, "est") - f(r, "exact") for r in rs]
    err_low = [f(r, "est_lower") - f(r, "exact_lower") for r in rs]
    pct = [100 * e / f(r, "exact") for e, r in zip(err, rs)]
    se = statistics.stdev(pct) / n ** 0.5 if n > 1 else float("nan")
    sources = sorted({r["src"] for r in rs})
    print(f"eps {eps}: {n} seeds ({rs[0]['seed']}–{rs[-1]['seed']}); reported ({'/'.join(sources)}) held {held}, "
          f"sampled 95% held {held_ci}; lower: reported held {held_low}, sampled held {held_ci_low}; "
          f"median reported width {statistics.median(widths):.2f}%; mean error {statistics.mean(pct):+.4f}% "
          f"(se {se:.4f}), {statistics.mean(err):+.2f} units; lower {statistics.mean(err_low):+.2f} units")
