#!/usr/bin/env python3
"""Tallies lab/scripts/tempered-lower-islands.py CSVs as if the tempered lower 2sED's islands threshold were T
(nats²): per ε the seeds whose sampled interval would be read, how many held, the 1% binomial quantile of 95%,
by noise level the held count, mean error (its standard error) and median half-width, and the same by the largest
J a later stage's islands ran at (above the starting J: sized). A seed some of whose islands stopped at the cap above
the sizing's target is not read (the gate since "Islands stopped at the cap give the bracket").
Usage: lab/scripts/tempered-lower-rule.py 'GLOB' [T, default 3]"""
import csv, glob, os, sys, statistics as st
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from binomial import q01
pat = sys.argv[1]; thr = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
rows = [r for f in sorted(glob.glob(pat)) for r in csv.DictReader(open(f))]


def capped(r):
    """Some replicate's islands stopped at the cap above the target: the column where the build writes it, else (a
    build that records the sized σ̄²) the gate's σ̄² differing from the sized one, which happens only then."""
    if r.get('capped'): return any(int(x) > 0 for x in r['capped'].split(';'))
    if r.get('noise_var_sized'): return r['noise_var'] != r['noise_var_sized']
    return False


for eps in ('0.001', '0.1'):
    R = [r for r in rows if r['eps'] == eps]
    nv = lambda r: max(float(x) for x in r['noise_var'].split(';'))
    ok = lambda r: nv(r) <= thr and float(r['decorrelation']) >= 0.85 and not capped(r)
    S = [r for r in R if ok(r)]
    held = sum(int(r['held']) for r in S)
    ex = st.mean(float(r['exact_lower']) for r in R)
    print(f"eps {eps}: seeds {len(R)} (exact {ex:.3f}); all sampled held {sum(int(r['held']) for r in R)}; "
          f"read under σ̄² ≤ {thr}: {len(S)}, held {held} (quantile {q01(len(S)) if S else '-'})")
    for lo, hi in ((0, 1), (1, 2), (2, 3), (3, 5), (5, 1e9)):
        T = [r for r in R if (lo < nv(r) <= hi) or (lo == 0 and nv(r) <= hi)]
        if T:
            errs = [float(r['est']) - float(r['exact_lower']) for r in T]
            hw = [(float(r['hi']) - float(r['lo'])) / 2 for r in T]
            print(f"  ({lo},{hi}]: n {len(T)} held {sum(int(r['held']) for r in T)} mean err {st.mean(errs):+.3f} "
                  f"(se {st.stdev(errs)/len(errs)**0.5 if len(errs)>1 else 0:.3f}) median hw {st.median(hw):.3f} "
                  f"J {sorted(set(r['inner'] for r in T))[:4]}")
    jm = lambda r: max(int(x) for x in r['inner'].split(';'))
    for j in sorted(set(map(jm, R))):
        T = [r for r in R if jm(r) == j]
        errs = [float(r['est']) - float(r['exact_lower']) for r in T]
        print(f"  largest J {j}: n {len(T)} read {sum(ok(r) for r in T)} held {sum(int(r['held']) for r in T)} "
              f"(read and held {sum(int(r['held']) for r in T if ok(r))}) mean err {st.mean(errs):+.3f}"
              f" (se {st.stdev(errs)/len(errs)**0.5 if len(errs)>1 else 0:.3f})")
    print("  decorrelation < 0.85:", sum(float(r['decorrelation']) < 0.85 for r in R),
          " min", min(float(r['decorrelation']) for r in R))
