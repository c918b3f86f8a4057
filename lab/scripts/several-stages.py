#!/usr/bin/env python3
"""Layered toys of three and four stages (pooled coupling, exact values; docs/METHOD.md §20) through the smc
estimator: per seed one `toy --family layered --mc` run (trial 1 of seed S is trial S − seed of a --trials
run), for two binaries: BASE (each later stage's variance summed, as before 2026-11-26) and NEW (the
genealogy's where larger, StagedSMC.genealogyVariance). Per configuration and ε: how often the sampled 95%
intervals of the 2sED and the lower 2sED held the exact values, z = error / se (mean, sd), how often the
per-stage rule of that date (every later stage's ESS ≥ 10% of K and e^{-s²} ≥ 2%) would have let the
sampled interval stand and how often it then held, and how often the bracket held.
Usage: python3 lab/scripts/several-stages.py BASE NEW OUT [SEEDS]"""
import json, math, os, statistics, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
base, new, out = sys.argv[1], sys.argv[2], sys.argv[3]
seeds = range(30001, 30001 + int(sys.argv[4] if len(sys.argv) > 4 else 200))
configs = [(u, g) for u in ('2,2,2', '2,2,2,2') for g in (2, 3, 4, 6)]

def run(bin_, tag, u, g, s):
    d = f'{out}/{tag}'; os.makedirs(d, exist_ok=True)
    f = f'{d}/u{u.replace(",", "")}-g{g}-s{s}.json'
    if not os.path.exists(f):
        size = ','.join('3' for _ in u.split(','))
        r = subprocess.run([bin_, 'toy', '--family', 'layered', '--units', u, '--unit-size', size, '--coupling', str(g),
                            '--eps', '0.001,0.1', '--mc', '--seed', str(s), '--threads', '1', '--json'], capture_output=True, text=True, check=True)
        open(f + '.tmp', 'w').write(r.stdout); os.replace(f + '.tmp', f)
    return json.load(open(f))

def held(ci, x): return ci[0] <= x <= ci[1]

print('| stages (2 units of 3 each) | γ | ε | limit outer ESS/K per stage | 2sED held: summed / genealogy | z mean, sd: summed / genealogy | lower held: summed / genealogy | per-stage rule: stood (held), summed | bracket held |')
print('|---|---|---|---|---|---|---|---|---|')
with ThreadPoolExecutor(2) as ex:
    for u, g in configs:
        runs = {tag: list(ex.map(lambda s: run(b, tag, u, g, s), seeds)) for tag, b in (('base', base), ('new', new))}
        for i, e in enumerate((0.001, 0.1)):
            row = {}
            for tag, rs in runs.items():
                ps = [d['points'][i] for d in rs]
                z = [p['error_mc'] / ((p['ci95_mc'][1] - p['ci95_mc'][0]) / 3.92) for p in ps]
                row[tag] = dict(h=sum(held(p['ci95_mc'], p['d_zeta']) for p in ps), hl=sum(held(p['ci95_lower_mc'], p['d_zeta_lower']) for p in ps),
                                zm=statistics.mean(z), zs=statistics.stdev(z))
            ps = [d['points'][i] for d in runs['base']]
            stood = [p for p in ps if min(p['stage_ess_fraction']) >= 0.1 and math.exp(-max(p['stage_log_var_mc'])) >= 0.02]
            lim = ', '.join(f'{v:.2f}' for v in ps[0]['stage_outer_ess_fraction'])
            b, n = row['base'], row['new']
            print(f"| {len(u.split(','))} | {g} | {e:g} | {lim} | {b['h']} / {n['h']} | {b['zm']:+.2f}, {b['zs']:.2f} / {n['zm']:+.2f}, {n['zs']:.2f} | "
                  f"{b['hl']} / {n['hl']} | {len(stood)} ({sum(held(p['ci95_mc'], p['d_zeta']) for p in stood)}) | "
                  f"{sum(held(p['d_zeta_bracket'], p['d_zeta']) for p in ps)} |")
    print(f'\n{len(seeds)} seeds per row ({seeds[0]}–{seeds[-1]}), K = 64, J = 32, 4 sweeps, δ = 1%.')
