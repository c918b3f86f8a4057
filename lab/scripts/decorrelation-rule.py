#!/usr/bin/env python3
"""Per-seed records of the smc estimator on two-stage layered toys, for the stage-1 decorrelation check
(lab/ESTIMATORS-LOG.md, 27 Nov 2026, sixth session): one `toy --family layered --mc --trials 1` per seed,
and per ε the exact values, the sampled and reported intervals, the rule's diagnostics (outer ESS, lognormal
limit) and the smallest decorrelation of stage 1's moves and of the islands' moves.
Usage: lab/scripts/decorrelation-rule.py OUT.csv SEEDS UNITS UNIT_SIZE COUPLING [SEED_OFFSET [further toy flags…]]"""
import csv, json, os, subprocess, sys

out, seeds, units, size, coupling = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
offset = int(sys.argv[6]) if len(sys.argv) > 6 else 20000
extra = sys.argv[7:]
binary = os.environ.get("TWOSCALE_BIN", ".build/release/twoscale")
done = set()
if os.path.exists(out):
    with open(out) as f:
        done = {int(r["seed"]) for r in csv.DictReader(f)}
with open(out, "a", newline="") as f:
    w = csv.writer(f)
    if not done:
        w.writerow(["units", "unit_size", "coupling", "seed", "eps", "exact", "exact_lower", "estimate", "ci_lo", "ci_hi",
                    "lower", "lower_lo", "lower_hi", "bracket_lo", "bracket_hi", "source", "reported_lo", "reported_hi",
                    "reported_lower_lo", "reported_lower_hi", "ess", "log_var", "stage1_decorrelation", "islands_decorrelation",
                    "bracket_lower_lo", "bracket_lower_hi"])
    for s in range(offset + 1, offset + seeds + 1):
        if s in done:
            continue
        r = subprocess.run([binary, "toy", "--family", "layered", "--units", units, "--unit-size", size, "--coupling", coupling,
                            "--eps", "0.001,0.1", "--mc", "--trials", "1", "--seed", str(s), "--json", "--quiet"] + extra,
                           capture_output=True, text=True, check=True)
        d = json.loads(r.stdout)
        smc = d["monte_carlo"]["smc"]
        for p in d["points"]:
            ci, li, b, ri, rl = p["ci95_mc"], p["ci95_lower_mc"], p["d_zeta_bracket"], p["interval_mc"], p["interval_lower_mc"]
            w.writerow([units, size, coupling, s, p["eps"], p["d_zeta"], p["d_zeta_lower"], p["d_zeta_mc"], ci[0], ci[1],
                        p["d_zeta_lower_mc"], li[0], li[1], b[0], b[1], p["interval_mc_source"], ri[0], ri[1], rl[0], rl[1],
                        min(p["stage_ess_fraction"]), max(p["stage_log_var_mc"]),
                        smc["stage1"]["min_decorrelation"], smc["islands"]["min_decorrelation"],
                        p["d_zeta_lower_bracket"][0], p["d_zeta_lower_bracket"][1]])
        f.flush()
