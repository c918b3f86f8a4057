#!/usr/bin/env python3
"""Pairs lab/scripts/sizing-gate.sh's runs seed by seed: per ε the exact 2sED, each arm's error, J and σ̄² per
later stage, the stage errors (nats) and the outer ESS fractions. Usage: sizing-gate-compare.py OUT"""
import glob, json, os, sys

out = sys.argv[1]
for f in sorted(glob.glob(os.path.join(out, "sized-*.json"))):
    g = f.replace(os.sep + "sized-", os.sep + "gated-")
    if not os.path.exists(g): continue
    runs = {"sized": json.load(open(f)), "gated": json.load(open(g))}
    print("==", os.path.basename(f)[len("sized-"):-len(".json")])
    for i, p in enumerate(runs["sized"]["points"]):
        ex, el = p["d_zeta"], p["d_zeta_lower"]
        print(f"  eps {p['eps']}: exact {ex:.2f}, lower {el:.2f}")
        for arm, d in runs.items():
            q = d["points"][i]
            e = q["d_zeta_mc"] - ex
            print(f"    {arm}: error {e:+.2f} ({100 * e / ex:+.3f}%), lower {q['d_zeta_lower_mc'] - el:+.2f}; "
                  f"J {q.get('stage_island_inner')} noise {[round(x, 2) for x in q.get('stage_island_noise_var', [])]} "
                  f"stage errors {[round(x, 2) for x in q['stage_error_mc']]} ESS {[round(x, 3) for x in q['stage_ess_fraction']]} "
                  f"{q['interval_mc_source']}")
