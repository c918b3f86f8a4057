#!/usr/bin/env python3
"""Summary of lab/scripts/decorrelation-rule.py's CSVs: per file and ε, how often the sampled 95% interval
held the exact 2sED and lower 2sED, over all seeds and over those the rule reports as sampled (the rule as
run, and the ESS parts alone, i.e. without the stage-1 decorrelation check), and how often the reported
interval held. Usage: lab/scripts/decorrelation-rule-summary.py CSV..."""
import csv, statistics as st, sys

for path in sys.argv[1:]:
    rows = list(csv.DictReader(open(path)))
    for eps in sorted({r["eps"] for r in rows}, key=float):
        rs = [r for r in rows if r["eps"] == eps]
        f = lambda r, k: float(r[k])
        held = lambda r: f(r, "ci_lo") <= f(r, "exact") <= f(r, "ci_hi")
        held_l = lambda r: f(r, "lower_lo") <= f(r, "exact_lower") <= f(r, "lower_hi")
        rep = lambda r: f(r, "reported_lo") <= f(r, "exact") <= f(r, "reported_hi")
        rep_l = lambda r: f(r, "reported_lower_lo") <= f(r, "exact_lower") <= f(r, "reported_lower_hi")
        ess_ok = lambda r: f(r, "ess") >= 0.1 and 2.718281828 ** -f(r, "log_var") >= 0.02
        sampled = [r for r in rs if r["source"] == "sampled"]
        ess_only = [r for r in rs if ess_ok(r)]
        checked = [r for r in ess_only if f(r, "stage1_decorrelation") >= 0.85]
        rep_new = lambda r: held(r) if r in checked else f(r, "bracket_lo") <= f(r, "exact") <= f(r, "bracket_hi")
        z = [(f(r, "estimate") - f(r, "exact")) / ((f(r, "ci_hi") - f(r, "ci_lo")) / 3.92) for r in rs]
        dec = [f(r, "stage1_decorrelation") for r in rs]
        isl = [f(r, "islands_decorrelation") for r in rs]
        print(f"{path.split('/')[-1]} ε={eps}: n={len(rs)}; stage-1 decorrelation {min(dec):.2f}–{max(dec):.2f} (median {st.median(dec):.2f}), islands median {st.median(isl):.2f}; "
              f"z mean {st.mean(z):+.2f} sd {st.stdev(z):.2f}")
        inb = sum(f(r, "bracket_lo") <= f(r, "exact") <= f(r, "bracket_hi") for r in rs)
        width = st.median([(f(r, "bracket_hi") - f(r, "bracket_lo")) / f(r, "exact") for r in rs])
        inl = sum(f(r, "bracket_lower_lo") <= f(r, "exact_lower") <= f(r, "bracket_lower_hi") for r in rs) if "bracket_lower_lo" in rs[0] else None
        print(f"   the certified bracket (ĉ estimated) held {inb}/{len(rs)}" + (f", the lower 2sED's {inl}/{len(rs)}" if inl is not None else "")
              + f"; median width {100 * width:.2f}%")
        print(f"   all seeds: sampled held {sum(map(held, rs))}/{len(rs)}, lower {sum(map(held_l, rs))}/{len(rs)}")
        print(f"   ESS rule alone lets {len(ess_only)} stand: held {sum(map(held, ess_only))}, lower {sum(map(held_l, ess_only))}")
        print(f"   with the stage-1 check (decorrelation ≥ 0.85) it lets {len(checked)} stand: held {sum(map(held, checked))}, lower {sum(map(held_l, checked))}; "
              f"reported (sampled cut to the bracket, else the bracket) held about {sum(map(rep_new, rs))}/{len(rs)}")
        print(f"   as run: sampled {len(sampled)}: held {sum(map(held, sampled))}, lower {sum(map(held_l, sampled))}; "
              f"reported held {sum(map(rep, rs))}/{len(rs)}, lower {sum(map(rep_l, rs))}/{len(rs)}")
