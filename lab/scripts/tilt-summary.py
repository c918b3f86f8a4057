#!/usr/bin/env python3
"""Tallies lab/scripts/tilt-pairs.sh OUT: per arm and ε, over the seeds every arm finished, the 2sED's and the lower
2sED's mean error against the toy's exact values (units, standard error over seeds), how often the 95% interval and
the reported interval held (and, among the seeds whose reported interval is sampled, how many held), the median
half-width, the later stages' mean errors (nats), in how many seeds the tilt engaged per later stage, and the median
seconds per run. Usage: tilt-summary.py OUT"""
import glob, json, re, statistics, sys

res = {}
for f in glob.glob(sys.argv[1] + '/*.json'):
    arm, seed = re.match(r'.*/(\w+)-(\d+)\.json$', f).groups()
    d = json.load(open(f))
    secs = float(open(f[:-5] + '.log').read().strip().splitlines()[-1].split()[0])
    for p in d['points']:
        res.setdefault(p['eps'], {}).setdefault(arm, {})[int(seed)] = (p, secs)


def held(iv, x):
    return iv[0] <= x <= iv[1]


for eps in sorted(res):
    arms = res[eps]
    common = set.intersection(*(set(a) for a in arms.values()))
    for arm in sorted(arms):
        L = [arms[arm][s] for s in sorted(common)]
        n = len(L)
        for q, est, ci, rep, src, exact in [('2sED', 'd_zeta_mc', 'ci95_mc', 'interval_mc', 'interval_mc_source', 'd_zeta'),
                                            ('lower', 'd_zeta_lower_mc', 'ci95_lower_mc', 'interval_lower_mc',
                                             'interval_lower_mc_source', 'd_zeta_lower')]:
            err = [p[est] - p[exact] for p, _ in L]
            se = statistics.stdev(err) / n ** 0.5 if n > 1 else float('nan')
            h95 = sum(held(p[ci], p[exact]) for p, _ in L)
            hrep = sum(held(p[rep], p[exact]) for p, _ in L)
            sampled = [p for p, _ in L if p.get(src) == 'sampled']
            hs = sum(held(p[rep], p[exact]) for p in sampled)
            hw = statistics.median((p[ci][1] - p[ci][0]) / 2 for p, _ in L)
            print(f"{arm:9s} ε {eps:g} {q:5s}: {n} seeds, exact {L[0][0][exact]:.2f}; mean error {statistics.mean(err):+.3f} "
                  f"(se {se:.3f}); 95% held {h95}/{n}, median half-width {hw:.3f}; reported held {hrep}/{n}, "
                  f"sampled {len(sampled)} (held {hs})")
        stages = [p['stage_error_mc'][1:] for p, _ in L]
        means = [statistics.mean(s[i] for s in stages) for i in range(len(stages[0]))]
        tilts = [p.get('stage_tilt', []) for p, _ in L]
        engaged = [sum(1 for t in tilts if len(t) > i and t[i]['engaged']) for i in range(len(stages[0]))]
        print(f"{arm:9s} ε {eps:g}: later stages' mean errors {', '.join(f'{v:+.2f}' for v in means)} nats; tilted in "
              f"{', '.join(map(str, engaged))} of {n}; median {statistics.median(t for _, t in L):.0f} s a run")
