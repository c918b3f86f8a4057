#!/usr/bin/env python3
"""Islands that stopped at the cap: tallies lab/scripts/tempered-lower-islands.py CSVs (written by a build that
records `noise_var_sized`, the pilot's σ̄² at the J the islands ran at, mean over replicates) by that σ̄², largest
over the later stages. Per ε and bin: seeds, how many the default gate read (`src` sampled), how many of all the
sampled intervals held, mean error (its standard error) and median half-width, in units of the lower 2sED; then, for
thresholds T, the gate that would read the sized σ̄² (≤ T, stage 1 decorrelated): read, held, the 1% binomial
quantile of 95%.
Usage: lab/scripts/tempered-lower-cap.py 'GLOB'"""
import csv, glob, os, sys, statistics as st
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from binomial import q01


rows = [r for f in sorted(glob.glob(sys.argv[1])) for r in csv.DictReader(open(f)) if r.get("noise_var_sized")]
mx = lambda r, k: max(float(x) for x in r[k].split(";"))
for eps in ("0.001", "0.1"):
    R = [r for r in rows if r["eps"] == eps]
    if not R: continue
    print(f"eps {eps}: seeds {len(R)}, J {sorted(set(r['inner'] for r in R))}")
    for lo, hi in ((0, 0.05), (0.05, 0.1), (0.1, 0.2), (0.2, 0.5), (0.5, 1), (1, 1e9)):
        T = [r for r in R if lo < mx(r, "noise_var_sized") <= hi or (lo == 0 and mx(r, "noise_var_sized") <= hi)]
        if not T: continue
        err = [float(r["est"]) - float(r["exact_lower"]) for r in T]
        hw = [(float(r["hi"]) - float(r["lo"])) / 2 for r in T]
        se = st.stdev(err) / len(err)**0.5 if len(err) > 1 else 0
        print(f"  sized σ̄² ({lo},{hi}]: n {len(T)} read by the default {sum(r['src'] == 'sampled' for r in T)} "
              f"held {sum(int(r['held']) for r in T)} mean err {st.mean(err):+.3f} (se {se:.3f}) median hw {st.median(hw):.3f}")
    for t in (0.05, 0.1, 0.2, 0.5, 1):
        S = [r for r in R if mx(r, "noise_var_sized") <= t and float(r["decorrelation"]) >= 0.85]
        print(f"  gate at the sized σ̄² ≤ {t}: read {len(S)}, held {sum(int(r['held']) for r in S)} "
              f"(quantile {q01(len(S)) if S else '-'})")
