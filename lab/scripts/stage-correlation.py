#!/usr/bin/env python3
"""Per-stage errors of the smc estimator on a layered toy over seeds (lab/ESTIMATORS-LOG.md, "Independence moves
with pilot-fitted proposals", 27 Nov 2026, ninth session): for each ε the mean and sd of each stage's
log Ẑ − log Z (nats), the correlation of the first two stages' errors, the sd of their sum, and the median sd
that the run's own 95% interval implies (its width over 3.92, in nats).
Usage: TWOSCALE_BIN=... lab/scripts/stage-correlation.py UNITS UNIT_SIZE COUPLING SEEDS [SEED_OFFSET]"""
import json, os, subprocess, sys, statistics as st

units, size, coupling, seeds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
offset = int(sys.argv[5]) if len(sys.argv) > 5 else 20000
binary = os.environ.get("TWOSCALE_BIN", ".build/release/twoscale")
acc = {}
for s in range(offset + 1, offset + 1 + seeds):
    d = json.loads(subprocess.run([binary, "toy", "--family", "layered", "--units", units, "--unit-size", size, "--coupling", coupling,
                                   "--eps", "0.001,0.1", "--mc", "--trials", "1", "--seed", str(s), "--json", "--quiet"],
                                  capture_output=True, text=True, check=True).stdout)
    for p in d["points"]:
        a = acc.setdefault(p["eps"], {"stages": [], "sd": [], "total": []})
        total = sum(p["stage_log_z_mc"]) - sum(p["stage_log_z"])
        a["stages"].append(p["stage_error_mc"])
        a["total"].append(total)
        if abs(total) > 1e-9:  # units of the 2sED per nat, from this run's own error
            per_nat = (p["d_zeta_mc"] - p["d_zeta"]) / total
            a["sd"].append((p["ci95_mc"][1] - p["ci95_mc"][0]) / 3.92 / per_nat)
for eps, a in acc.items():
    k = len(a["stages"][0])
    col = lambda i: [x[i] for x in a["stages"]]
    line = f"{units}/{size} γ={coupling} ε={eps}: stage errors (nats, mean ± sd) " + ", ".join(
        f"{st.mean(col(i)):+.3f} ± {st.stdev(col(i)):.3f}" for i in range(k))
    if k >= 2:
        line += f"; correlation of stages 1 and 2 {st.correlation(col(0), col(1)):+.2f}"
    line += f"; sum {st.mean(a['total']):+.3f} ± {st.stdev(a['total']):.3f}; the interval's sd, median {st.median(a['sd']):.3f}"
    print(line)
