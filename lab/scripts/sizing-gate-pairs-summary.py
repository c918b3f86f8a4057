#!/usr/bin/env python3
"""Tallies sizing-gate-pairs.py OUT-*.csv: per ε the seeds whose stage-3 J the gate changed, both arms' mean errors
and their paired difference (standard errors), and whether every other row and every reported interval is identical."""
import csv, glob, statistics as st, sys
rows = [r for f in sorted(glob.glob(sys.argv[1] + '-*.csv')) for r in csv.reader(open(f))]
for eps in ('0.001', '0.1'):
    R = [r for r in rows if r[1] == eps]
    ch = [r for r in R if r[8] != r[9]]
    same = [r for r in R if r[8] == r[9]]
    ident = all(r[3] == r[4] and r[6] == r[7] for r in same)
    src = all(r[12] == r[13] for r in R) and all(r[14:16] == r[16:18] for r in R)
    es = [float(r[3]) - float(r[2]) for r in ch]; eg = [float(r[4]) - float(r[2]) for r in ch]
    ls = [float(r[6]) - float(r[5]) for r in ch]; lg = [float(r[7]) - float(r[5]) for r in ch]
    d = [b - a for a, b in zip(es, eg)]
    se = lambda x: st.stdev(x) / len(x) ** 0.5
    ex = st.mean(float(r[2]) for r in R)
    print(f"eps {eps}: {len(R)} seeds, {len(ch)} where the gate changed stage 3's J (sized J: {sorted(set(r[8].split(';')[1] for r in ch))}); unchanged rows identical: {ident}; reported intervals identical: {src}")
    if ch:
        print(f"  2sED error sized {st.mean(es):+.4f} ({se(es):.4f})  gated {st.mean(eg):+.4f} ({se(eg):.4f})  diff {st.mean(d):+.4f} ({se(d):.4f})  exact ~{ex:.2f}")
        print(f"  lower  error sized {st.mean(ls):+.4f} ({se(ls):.4f})  gated {st.mean(lg):+.4f} ({se(lg):.4f})")
        print(f"  |error| mean sized {st.mean(map(abs,es)):.4f} gated {st.mean(map(abs,eg)):.4f};  gated σ̄²3 median {st.median(float(r[11].split(';')[1]) for r in ch):.2f} sized {st.median(float(r[10].split(';')[1]) for r in ch):.2f}")
        hs = sum(float(r[18]) <= float(r[2]) <= float(r[19]) for r in ch); hg = sum(float(r[20]) <= float(r[2]) <= float(r[21]) for r in ch)
        print(f"  unreported sampled ci95 held: sized {hs}/{len(ch)}, gated {hg}/{len(ch)}")
