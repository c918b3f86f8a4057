#!/usr/bin/env python3
"""Tallies lab/scripts/surrogate-pairs.sh OUT: per arm and ε, the mean error of the 2sED estimate against the toy's
exact value (units, its standard error over seeds), how often the 95% interval and the reported interval held,
the later stages' mean errors (nats) and the median seconds per run. Usage: surrogate-pairs-summary.py OUT"""
import glob, json, re, sys
import numpy as np

res = {}
for f in glob.glob(sys.argv[1] + '/*.json'):
    arm, seed = re.match(r'.*/(\w+)-(\d+)\.json$', f).groups()
    d = json.load(open(f))
    secs = float(open(f[:-5] + '.log').read().strip().splitlines()[-1].split()[0])
    for p in d['points']:
        res.setdefault((arm, p['eps']), []).append((int(seed), p, secs))
seeds = {}
for (arm, eps), L in sorted(res.items()):
    seeds.setdefault(eps, []).append({s for s, _, _ in L})
for (arm, eps), L in sorted(res.items()):
    common = set.intersection(*seeds[eps])
    L = sorted(x for x in L if x[0] in common)
    n = len(L)
    err = np.array([p['d_zeta_mc'] - p['d_zeta'] for _, p, _ in L])
    held = sum(p['ci95_mc'][0] <= p['d_zeta'] <= p['ci95_mc'][1] for _, p, _ in L)
    rep = sum(p['interval_mc'][0] <= p['d_zeta'] <= p['interval_mc'][1] for _, p, _ in L)
    sampled = [p for _, p, _ in L if p['interval_mc_source'] == 'sampled']
    stages = np.array([p['stage_error_mc'][1:] for _, p, _ in L])
    hw = np.median([(p['ci95_mc'][1] - p['ci95_mc'][0]) / 2 for _, p, _ in L])
    print(f"{arm:5s} ε {eps:g}: {n} seeds, exact {L[0][1]['d_zeta']:.2f}; mean error {err.mean():+.3f} "
          f"(se {err.std(ddof=1) / np.sqrt(n):.3f}) units; 95% interval held {held}/{n}, median half-width {hw:.3f}; "
          f"reported held {rep}/{n} ({len(sampled)} sampled, "
          f"{sum(p['interval_mc'][0] <= p['d_zeta'] <= p['interval_mc'][1] for p in sampled)} held); later stages' "
          f"mean errors {', '.join(f'{v:+.2f}' for v in stages.mean(0))} nats; median {np.median([t for _, _, t in L]):.0f} s a run")
