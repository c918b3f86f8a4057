#!/usr/bin/env python3
"""Two runs of lab/scripts/tempered-lower-islands.py on the same seeds, paired (lab log, 30 Nov 2026, thirtieth
session): per ε the run's seeds, how many read the sampled interval and how many held, its mean error (units of the
lower 2sED), the paired change against the base, and both median widths ((hi − lo) / exact, over the paired seeds).
Usage: lab/scripts/tempered-lower-paired.py 'RUN_GLOB' 'BASE_GLOB'"""
import csv, glob, statistics as st, sys


def load(pattern):
    rows = {}
    for path in sorted(glob.glob(pattern)):
        for r in csv.DictReader(open(path)):
            rows[(int(r['seed']), r['eps'])] = r
    return rows


def err(r): return float(r['est']) - float(r['exact_lower'])
def width(r): return 100 * (float(r['hi']) - float(r['lo'])) / float(r['exact_lower'])
def se(xs): return st.stdev(xs) / len(xs) ** 0.5 if len(xs) > 1 else 0.0


run, base = load(sys.argv[1]), load(sys.argv[2])
for eps in sorted({k[1] for k in run}, key=float):
    keys = sorted(k for k in run if k[1] == eps and k in base)
    if not keys:
        continue
    a, b = [run[k] for k in keys], [base[k] for k in keys]
    diff = [err(x) - err(y) for x, y in zip(a, b)]
    print(f"eps {eps}: {len(keys)} paired seeds; read {sum(r['src'] == 'sampled' for r in a)} (base {sum(r['src'] == 'sampled' for r in b)}), "
          f"held {sum(int(r['held']) for r in a)} (base {sum(int(r['held']) for r in b)}); "
          f"error {st.mean(map(err, a)):+.3f} ({se([err(r) for r in a]):.3f}), change {st.mean(diff):+.3f} ({se(diff):.3f}); "
          f"median width {st.median(map(width, a)):.3f}% (base {st.median(map(width, b)):.3f}%)")
