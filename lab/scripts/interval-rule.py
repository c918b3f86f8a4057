#!/usr/bin/env python3
"""Per-trial records of the smc estimator on layered toys, for the rule that decides when a sampled
interval is reported (ReportedInterval): one `toy --family layered --mc --trials 1` per seed, and per ε
the outer ESS/K, the island noise, whether the sampled 95% interval held the exact value, and whether
the reported interval did. Seeds start after SEED_OFFSET (default 1000). Usage: lab/scripts/interval-rule.py OUT.csv SEEDS UNITS UNIT_SIZE COUPLING..."""
import csv, json, subprocess, sys, os

out, seeds, units, size = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
couplings = sys.argv[5:]
binary = os.environ.get("TWOSCALE_BIN", ".build/release/twoscale")
new = not os.path.exists(out)
with open(out, "a", newline="") as f:
    w = csv.writer(f)
    if new:
        w.writerow(["units", "unit_size", "coupling", "seed", "eps", "exact", "exact_lower", "limit_ess", "ess", "log_var", "noise",
                    "estimate", "ci_lo", "ci_hi", "covered", "lower", "lower_lo", "lower_hi", "covered_lower",
                    "bracket_lo", "bracket_hi", "reported_lo", "reported_hi", "source", "reported_covered",
                    "reported_lower_lo", "reported_lower_hi", "reported_lower_covered"])
    for g in couplings:
        for s in range(1, seeds + 1):
            r = subprocess.run([binary, "toy", "--family", "layered", "--units", units, "--unit-size", size, "--coupling", g,
                                "--eps", "0.001,0.1", "--mc", "--trials", "1", "--seed", str(int(os.environ.get("SEED_OFFSET", "1000")) + s), "--json"],
                               capture_output=True, text=True, check=True)
            d = json.loads(r.stdout)
            for p in d["points"]:
                ci, li, b = p["ci95_mc"], p["ci95_lower_mc"], p["d_zeta_bracket"]
                ri, rl = p["interval_mc"], p["interval_lower_mc"]
                w.writerow([units, size, g, s, p["eps"], p["d_zeta"], p["d_zeta_lower"], p["outer_ess_fraction"],
                            min(p["stage_ess_fraction"]), max(p["stage_log_var_mc"]), max(p["stage_island_noise"]), p["d_zeta_mc"], ci[0], ci[1],
                            int(ci[0] <= p["d_zeta"] <= ci[1]), p["d_zeta_lower_mc"], li[0], li[1],
                            int(li[0] <= p["d_zeta_lower"] <= li[1]), b[0], b[1], ri[0], ri[1], p["interval_mc_source"],
                            int(ri[0] <= p["d_zeta"] <= ri[1]), rl[0], rl[1], int(rl[0] <= p["d_zeta_lower"] <= rl[1])])
            f.flush()
