#!/usr/bin/env python3
"""Tallies lab/scripts/tilt-pairs.sh OUT per arm and ε: each stage's mean error (nats, at the run's own scale) and
its variance over seeds, the 2sED's standard deviation over seeds against the median reported standard error
(half-width / 1.96), and the mean number of tilt steps per later stage (lab log, 5 Dec 2026, sixty-sixth session:
a stage's mean error against half its variance, the lognormal model's shortfall). Usage: tilt-stage-spread.py OUT..."""
import glob, json, re, statistics as st, sys

for out in sys.argv[1:]:
    res = {}
    for f in glob.glob(out + '/*.json'):
        arm = re.match(r'.*/(\w+)-(\d+)\.json$', f).group(1)
        for p in json.load(open(f))['points']:
            res.setdefault((arm, p['eps']), []).append(p)
    for (arm, eps), L in sorted(res.items()):
        stages = []
        for i in range(len(L[0]['stage_error_mc'])):
            x = [p['stage_error_mc'][i] for p in L]
            stages.append(f"s{i + 1} {st.mean(x):+.3f} (var {st.variance(x):.3f})")
        sd = st.stdev(p['d_zeta_mc'] - p['d_zeta'] for p in L)
        se = st.median((p['ci95_mc'][1] - p['ci95_mc'][0]) / 2 for p in L) / 1.96
        steps = [[t['steps'] for t in p.get('stage_tilt', [])] for p in L]
        mean_steps = [st.mean(s[i] for s in steps) for i in range(len(steps[0]))] if steps[0] else []
        print(f"{out} {arm} ε {eps:g}, {len(L)} seeds: {'; '.join(stages)} | 2sED sd {sd:.3f}, reported se {se:.3f} | "
              f"tilt steps {', '.join(f'{m:.2f}' for m in mean_steps)}")
