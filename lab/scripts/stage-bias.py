#!/usr/bin/env python3
"""Per-seed stage errors of the smc estimator on a layered toy (lab/ESTIMATORS-LOG.md, 28 Nov 2026, eleventh session):
one `toy --family layered --mc --trials 1` per seed; per ε the exact 2sED, the estimate and its sampled interval, and per
stage the error against the exact stage term (nats), the islands' noise share, the outer log-weights' spread and ESS.
Usage: lab/scripts/stage-bias.py OUT.csv SEEDS OFFSET UNITS SIZES [further toy flags…]"""
import csv, json, os, subprocess, sys
out, seeds, offset, units, sizes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
extra = sys.argv[6:]
binary = os.environ.get("TWOSCALE_BIN", ".build/release/twoscale")
done = set()
if os.path.exists(out):
    with open(out) as f: done = {int(r["seed"]) for r in csv.DictReader(f)}
with open(out, "a", newline="") as f:
    w = csv.writer(f)
    if not done:
        w.writerow(["seed", "eps", "exact", "est", "lo", "hi", "err_units", "stage_err", "stage_noise_share", "stage_log_var", "stage_ess", "src"])
    for s in range(offset + 1, offset + seeds + 1):
        if s in done: continue
        r = subprocess.run([binary, "toy", "--family", "layered", "--units", units, "--unit-size", sizes, "--eps", "0.001,0.1",
                            "--mc", "--trials", "1", "--seed", str(s), "--json", "--quiet"] + extra, capture_output=True, text=True, check=True)
        d = json.loads(r.stdout)
        for p in d["points"]:
            w.writerow([s, p["eps"], p["d_zeta"], p["d_zeta_mc"], p["ci95_mc"][0], p["ci95_mc"][1], p["d_zeta_mc"] - p["d_zeta"],
                        ";".join("%.4f" % x for x in p["stage_error_mc"]), ";".join("%.4f" % x for x in p["stage_island_noise"]),
                        ";".join("%.4f" % x for x in p["stage_log_var_mc"]), ";".join("%.4f" % x for x in p["stage_ess_fraction"]),
                        p["interval_mc_source"]])
        f.flush()
