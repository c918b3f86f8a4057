#!/usr/bin/env python3
"""The precision target on exact cases, seed by seed (lab/ESTIMATORS-LOG.md, 28 Nov 2026, fifteenth session):
one `toy --family layered --mc --trials 1 --target-width W` per seed from the defaults, resumable; per ε the exact
2sED and lower 2sED, the estimates, their reported intervals with sources, and the target's outcome and rounds
(K/J/stage-1 sweeps[+i for independence sweeps]: width%, source). LANE=i/n runs every n-th seed from the i-th.
Usage: lab/scripts/target-exact.py OUT.csv SEEDS OFFSET UNITS SIZES --target-width W [further toy flags…]"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layered_seeds

cols = ["seed", "eps", "exact", "est", "lo", "hi", "src", "exact_lower", "est_lower", "lower_lo", "lower_hi", "lower_src",
        "ess", "log_var", "outcome", "rounds", "seconds"]


def rows_of(s, d):
    j = lambda xs, f="%.4f": ";".join(f % x for x in xs)
    t = d["precision_target"]
    rounds = " ".join("%d/%d/%d%s:%.3g%%%s" % (r["paths"], r["inner"], r["stage1_sweeps"], "+i" if r["independence_moves"] else "",
                                              100 * r["width"], "s" if r["source"] == "sampled" else "b") for r in t["rounds"])
    secs = sum(r["seconds"] for r in t["rounds"])
    return [[s, p["eps"], p["d_zeta"], p["d_zeta_mc"], *p["interval_mc"], p["interval_mc_source"],
             p["d_zeta_lower"], p["d_zeta_lower_mc"], *p["interval_lower_mc"], p["interval_lower_mc_source"],
             j(p["stage_ess_fraction"]), j(p["stage_log_var_mc"]), t["outcome"], rounds, "%.1f" % secs] for p in d["points"]]


layered_seeds.run(cols, rows_of)
