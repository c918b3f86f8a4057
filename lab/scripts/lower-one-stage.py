#!/usr/bin/env python3
"""The lower 2sED's sampled interval with one later stage, seed by seed (lab/ESTIMATORS-LOG.md, 28 Nov 2026,
thirteenth session): one `toy --family layered --mc --trials 1` per seed of a two-stage toy, resumable; per ε
the exact lower 2sED, its estimate, sampled and reported intervals, the stage's counted ESS fraction, the
outer log-weights' spread s², the islands' mean noise variance σ̄² (`stage_island_noise_var`; from builds before
it was written for two stages, share × s², which is low where the share is capped at 1) and stage 1's smallest
decorrelation. LANE=i/n runs every n-th seed from the i-th.
Usage: lab/scripts/lower-one-stage.py OUT.csv SEEDS OFFSET UNITS SIZES [further toy flags…]"""
import csv, json, os, subprocess, sys
out, seeds, offset, units, sizes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
extra = sys.argv[6:]
binary = os.environ.get("TWOSCALE_BIN", ".build/release/twoscale")
lane, lanes = (int(x) for x in os.environ.get("LANE", "0/1").split("/"))
cols = ["seed", "eps", "exact", "est", "ci_lo", "ci_hi", "src", "exact_lower", "est_lower", "ci_lower_lo", "ci_lower_hi",
        "lower_lo", "lower_hi", "lower_src", "ess", "log_var", "noise_share", "noise_var", "decorrelation"]
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
        mixed = d["monte_carlo"]["smc"]["stage1"].get("min_decorrelation")
        for p in d["points"]:
            s2, share = p["stage_log_var_mc"][0], p["stage_island_noise"][0]
            noise = p.get("stage_island_noise_var", [share * s2])[0]  # the key, where the build writes it
            w.writerow([s, p["eps"], p["d_zeta"], p["d_zeta_mc"], *p["ci95_mc"], p["interval_mc_source"],
                        p["d_zeta_lower"], p["d_zeta_lower_mc"], *p["ci95_lower_mc"], *p["interval_lower_mc"], p["interval_lower_mc_source"],
                        p["stage_ess_fraction"][0], s2, share, noise, "" if mixed is None else mixed])
        f.flush()
