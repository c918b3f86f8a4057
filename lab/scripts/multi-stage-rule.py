#!/usr/bin/env python3
"""The reported interval on layered toys of two or more later stages, seed by seed (lab/ESTIMATORS-LOG.md,
28 Nov 2026, twelfth session): one `toy --family layered --mc --trials 1` per seed, resumable; per ε the exact
2sED and lower 2sED, the estimates, their sampled and reported intervals with sources, and per later stage the
islands' J and mean noise variance. Several lanes: LANE=i/n runs every n-th seed from the i-th.
Usage: lab/scripts/multi-stage-rule.py OUT.csv SEEDS OFFSET UNITS SIZES [further toy flags…]"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layered_seeds

cols = ["seed", "eps", "exact", "est", "ci_lo", "ci_hi", "lo", "hi", "src", "exact_lower", "est_lower", "ci_lower_lo",
        "ci_lower_hi", "lower_lo", "lower_hi", "lower_src", "inner", "noise_var", "ess", "log_var", "stage_err", "seconds"]


def rows_of(s, d):
    j = lambda xs, f="%.4f": ";".join(f % x for x in xs)
    return [[s, p["eps"], p["d_zeta"], p["d_zeta_mc"], *p["ci95_mc"], *p["interval_mc"], p["interval_mc_source"],
             p["d_zeta_lower"], p["d_zeta_lower_mc"], *p["ci95_lower_mc"], *p["interval_lower_mc"], p["interval_lower_mc_source"],
             j(p.get("stage_island_inner", []), "%d"), j(p.get("stage_island_noise_var", [])), j(p["stage_ess_fraction"]),
             j(p["stage_log_var_mc"]), j(p["stage_error_mc"]), d.get("seconds", "")] for p in d["points"]]


layered_seeds.run(cols, rows_of)
