#!/usr/bin/env python3
"""The tempered lower 2sED's sampled interval against the islands' noise (lab/ESTIMATORS-LOG.md, 29 Nov 2026,
twenty-fourth session): one `toy --family layered --mc --joint --trials 1` per seed, resumable; per ε the exact
lower 2sED, the tempered estimate, its sampled 95% interval (`ci95_lower_joint_mc`) and whether it held, the
reported source, the islands' J and noise variance per later stage (the gate's, and where the build writes it the pilot's
at the J the islands ran at), stage 1's decorrelation, and where the build writes it how many replicates per later
stage stopped at the cap above the sizing's target.
Usage: lab/scripts/tempered-lower-islands.py OUT.csv SEEDS OFFSET UNITS SIZES [further toy flags…] (add --joint)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layered_seeds

cols = ["seed", "eps", "exact_lower", "est", "lo", "hi", "held", "src", "inner", "noise_var", "decorrelation", "noise_var_sized", "capped"]


def rows_of(s, d):
    j = lambda xs, f="%.4f": ";".join(f % x for x in xs)
    out = []
    for p in d["points"]:
        lo, hi = p["ci95_lower_joint_mc"]
        out.append([s, p["eps"], p["d_zeta_lower"], p["d_zeta_lower_joint_mc"], lo, hi, int(lo <= p["d_zeta_lower"] <= hi),
                    p["interval_lower_joint_mc_source"], j(p["stage_island_inner_lower_joint"], "%d"),
                    j(p["stage_island_noise_var_lower_joint"]), "%.4f" % p["stage1_decorrelation_lower_joint"],
                    j(p.get("stage_island_noise_var_sized_lower_joint", [])),
                    j(p.get("stage_island_replicates_capped_lower_joint", []), "%d")])
    return out


layered_seeds.run(cols, rows_of)
