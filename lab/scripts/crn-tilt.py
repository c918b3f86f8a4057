#!/usr/bin/env python3
"""Tally lab/scripts/crn-tilt.sh's runs: per arm, seed and ε the 2sED, its 95% half-width, and per later stage the
outer ESS, the outer log-weights' spread s², the islands' noise σ̄², and the tilt fit's R² (* where tilted).
Usage: crn-tilt.py OUT"""
import glob, json, os, sys

for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    arm, seed = os.path.basename(f)[:-5].rsplit("-", 1)
    j = json.load(open(f))
    for p in j["points"]:
        hw = (p["ci95"][1] - p["ci95"][0]) / 2
        fit = " ".join(f"{t.get('explained', 0):.2f}{'*' if t.get('engaged') else ''}" for t in p.get("stage_tilt", []))
        cols = lambda k: " ".join(f"{x:.2f}" for x in p.get(k, []))
        print(f"{arm:12s} {seed:>4s} ε={p['eps']:<6g} 2sED {p['d_zeta']:.3f} ±{hw:.3f}  ESS [{cols('stage_ess')}]  "
              f"s² [{cols('stage_log_var')}]  σ̄² [{cols('stage_island_noise_var')}]  R² [{fit}]  {j['seconds']:.0f} s")
