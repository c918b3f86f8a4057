#!/usr/bin/env python3
"""The reported interval on layered toys of two or more later stages, seed by seed (lab/ESTIMATORS-LOG.md,
28 Nov 2026, twelfth session): one `toy --family layered --mc --trials 1` per seed, resumable; per ε the exact
2sED and lower 2sED, the estimates, their sampled and reported intervals with sources, and per later stage the
islands' J and mean noise variance. Several lanes: LANE=i/n runs every n-th seed from the i-th.
Usage: lab/scripts/multi-stage-rule.py OUT.csv SEEDS OFFSET UNITS SIZES [further toy flags…]"""
import csv, json, os, subprocess, sys
out, seeds, offset, units, sizes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
extra = sys.argv[6:]
binary = os.environ.get("TWOSCALE_BIN", ".build/release/twoscale")
lane, lanes = (int(x) for x in os.environ.get("LANE", "0/1").split("/"))
cols = ["seed", "eps", "exact", "est", "ci_lo", "ci_hi", "lo", "hi", "src", "exact_lower", "est_lower", "ci_lower_lo",
        "ci_lower_hi", "lower_lo", "lower_hi", "lower_src", "inner", "noise_var", "ess", "log_var", "stage_err", "seconds"]
done = set()
if os.path.exists(out):
    with open(out) as f: done = {int(r["seed"]) for r in csv.DictReader(f)}
with open(out, "a", newline="") as f:
    w = csv.writer(f)
    if not done: w.writerow(cols)
    for s in range(offset + 1, offset + seeds + 1):
        if s in done or (s - offset - 1) % lanes != lane: continue
        r = subprocess.run([binary, "toy", "--family", "layered", "--units", units, "--unit-size", sizes, "--eps", "0.001,0.1",
                            "--mc", "--trials", "1", "--seed", str(s), "--json", "--quiet"] + extra, capture_output=True, text=True, check=True)
        d = json.loads(r.stdout)
        j = lambda xs, f="%.4f": ";".join(f % x for x in xs)
        for p in d["points"]:
            w.writerow([s, p["eps"], p["d_zeta"], p["d_zeta_mc"], *p["ci95_mc"], *p["interval_mc"], p["interval_mc_source"],
                        p["d_zeta_lower"], p["d_zeta_lower_mc"], *p["ci95_lower_mc"], *p["interval_lower_mc"], p["interval_lower_mc_source"],
                        j(p.get("stage_island_inner", []), "%d"), j(p.get("stage_island_noise_var", [])), j(p["stage_ess_fraction"]),
                        j(p["stage_log_var_mc"]), j(p["stage_error_mc"]), d.get("seconds", "")])
        f.flush()
