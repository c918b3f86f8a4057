#!/usr/bin/env python3
"""The lower 2sED's sampled interval with one later stage, seed by seed (lab/ESTIMATORS-LOG.md, 28 Nov 2026,
thirteenth session): one `toy --family layered --mc --trials 1` per seed of a two-stage toy, resumable; per ε
the exact lower 2sED, its estimate, sampled and reported intervals, the stage's counted ESS fraction, the
outer log-weights' spread s², the islands' mean noise variance σ̄² (`stage_island_noise_var`; from builds before
it was written for two stages, share × s², which is low where the share is capped at 1) and stage 1's smallest
decorrelation. LANE=i/n runs every n-th seed from the i-th.
Usage: lab/scripts/lower-one-stage.py OUT.csv SEEDS OFFSET UNITS SIZES [further toy flags…]"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layered_seeds

cols = ["seed", "eps", "exact", "est", "ci_lo", "ci_hi", "src", "exact_lower", "est_lower", "ci_lower_lo", "ci_lower_hi",
        "lower_lo", "lower_hi", "lower_src", "ess", "log_var", "noise_share", "noise_var", "decorrelation"]


def rows_of(s, d):
    mixed = d["monte_carlo"]["smc"]["stage1"].get("min_decorrelation")
    rows = []
    for p in d["points"]:
        s2, share = p["stage_log_var_mc"][0], p["stage_island_noise"][0]
        noise = p.get("stage_island_noise_var", [share * s2])[0]  # the key, where the build writes it
        rows.append([s, p["eps"], p["d_zeta"], p["d_zeta_mc"], *p["ci95_mc"], p["interval_mc_source"],
                     p["d_zeta_lower"], p["d_zeta_lower_mc"], *p["ci95_lower_mc"], *p["interval_lower_mc"], p["interval_lower_mc_source"],
                     p["stage_ess_fraction"][0], s2, share, noise, "" if mixed is None else mixed])
    return rows


layered_seeds.run(cols, rows_of)
