#!/usr/bin/env python3
"""Tallies lab/scripts/chains-net.sh OUT: per ε and arm (R chains; tNcR: `--tilt-moves N` and R chains), over the seeds with a reference, the smc
2sED's mean error against joint tempering (`ref-S.json`), its spread, how often its sampled 95% interval (`ci95`)
and the reported one (`interval`) held the reference value, the mean half-width, and z = error / √(se² + se_ref²)
(se: a 95% half-width / 1.96). Usage: lab/scripts/chains-net.py OUT"""
import glob, json, math, os, re, sys
from statistics import mean, stdev

out = sys.argv[1]
ref = {}
for f in glob.glob(os.path.join(out, "ref-*.json")):
    s = int(re.search(r"ref-(\d+)\.json$", f).group(1))
    ref[s] = {p["eps"]: p for p in json.load(open(f))["points"]}
arms = sorted({m.group(1) for f in os.listdir(out) for m in [re.match(r"(\d+|t\d+c\d+)-\d+\.json$", f)] if m},
              key=lambda a: (a.startswith("t"), int(a.split("c")[-1])))
print("| ε | R | seeds | mean error | sd | mean half-width | 95% held | reported held (sampled) | z mean | z sd | \\|z\\| < 1.96 |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for eps in sorted({e for r in ref.values() for e in r}):
    for R in arms:
        rows = []
        for s, r in sorted(ref.items()):
            f = os.path.join(out, "%s-%d.json" % (R, s))
            if not os.path.exists(f) or eps not in r:
                continue
            p = next(q for q in json.load(open(f))["points"] if q["eps"] == eps)
            t = r[eps]["d_zeta"]
            se_ref = (r[eps]["ci95"][1] - r[eps]["ci95"][0]) / 2 / 1.96
            lo, hi = p["ci95"]
            se = (hi - lo) / 2 / 1.96
            rows.append(dict(err=p["d_zeta"] - t, hw=(hi - lo) / 2, held=lo <= t <= hi,
                             rep=p["interval"][0] <= t <= p["interval"][1], sampled=p["interval_source"] == "sampled",
                             z=(p["d_zeta"] - t) / math.sqrt(se * se + se_ref * se_ref)))
        if len(rows) < 2:
            continue
        e = [x["err"] for x in rows]; z = [x["z"] for x in rows]
        print("| %g | %s | %d | %+.3f | %.3f | %.3f | %d | %d (%d) | %+.2f | %.2f | %d |" % (
            eps, R, len(rows), mean(e), stdev(e), mean(x["hw"] for x in rows), sum(x["held"] for x in rows),
            sum(x["rep"] for x in rows), sum(x["sampled"] for x in rows), mean(z), stdev(z), sum(abs(v) < 1.96 for v in z)))
