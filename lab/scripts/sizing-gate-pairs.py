#!/usr/bin/env python3
"""The sizing gate paired on many seeds of a small shape (lab log, 2 Dec 2026, forty-seventh session): per seed one
`toy --family layered --mc --trials 1` without and one with TWOSCALE_EXPERIMENT_SIZING_GATE (a build with
lab/patches/sizing-gate.patch, TWOSCALE_BIN), one CSV row per seed and ε. Lanes: LANE of LANES takes seeds ≡ LANE.
Usage: sizing-gate-pairs.py LANE LANES FIRST END OUT [toy flags…]; tally with sizing-gate-pairs-summary.py OUT"""
B = os.environ.get('TWOSCALE_BIN', '.build/release/twoscale')
lane, lanes = int(sys.argv[1]), int(sys.argv[2]); n0, n1 = int(sys.argv[3]), int(sys.argv[4])
flags = sys.argv[6:]
out = open(f'{sys.argv[5]}-{lane}.csv', 'a')
w = csv.writer(out)
for seed in range(n0, n1):
    if seed % lanes != lane: continue
    res = {}
    for arm in ('sized', 'gated'):
        env = dict(os.environ)
        if arm == 'gated': env['TWOSCALE_EXPERIMENT_SIZING_GATE'] = '1'
        else: env.pop('TWOSCALE_EXPERIMENT_SIZING_GATE', None)
        r = subprocess.run([B, 'toy', '--family', 'layered', '--eps', '0.001,0.1', '--mc', '--trials', '1', '--seed', str(seed), '--json', '--quiet', '--threads', '1'] + flags, capture_output=True, text=True, env=env, check=True)
        res[arm] = json.loads(r.stdout)['points']
    for a, b in zip(res['sized'], res['gated']):
        w.writerow([seed, a['eps'], a['d_zeta'], a['d_zeta_mc'], b['d_zeta_mc'], a['d_zeta_lower'], a['d_zeta_lower_mc'], b['d_zeta_lower_mc'],
                    ';'.join(map(str, a['stage_island_inner'])), ';'.join(map(str, b['stage_island_inner'])),
                    ';'.join('%.3f' % x for x in a['stage_island_noise_var']), ';'.join('%.3f' % x for x in b['stage_island_noise_var']),
                    a['interval_mc_source'], b['interval_mc_source'], *a['interval_mc'], *b['interval_mc'], *a['ci95_mc'], *b['ci95_mc']])
    out.flush()
