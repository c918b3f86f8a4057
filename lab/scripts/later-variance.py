#!/usr/bin/env python3
"""Where a three-stage run's later-stage error comes from (lab log, 4 Dec 2026, fifty-sixth session). RUNS holds
`tilt-SEED.json` and `tilt-SEED.log` from `toy ... --json` built with lab/patches/later-stage-variance.patch (its
`LABVAR` lines on stderr): per ε, each stage's mean error, spread over seeds and the run's own standard error for
it, the z-scores' rms and how many exceed 1.96, the later stages' (the genealogy's `2g` against the Cauchy–Schwarz
bound) and the total's; the stages' correlations. SALTS (optional) holds `sN-SEED.json` from the same binary with
`LAB_SALT=N`, which redraws only stage 3's random numbers: the pooled within-seed variance of stage 3's error
(stage 3's own) against the variance of its seed means (what the stage-2 population it starts from adds).
Usage: later-variance.py RUNS [SALTS]"""
import collections, glob, json, math, statistics as st, sys


def point(d, eps):
    return [q for q in d['points'] if abs(q['eps'] - eps) < 1e-12][0]


def rms(a):
    return math.sqrt(sum(x * x for x in a) / len(a))


runs = sorted(glob.glob(sys.argv[1] + '/tilt-*.json'))
for eps in (0.001, 0.1):
    t = 1 if eps < 0.01 else 0  # the run's stop index: stops are sorted by scale
    R = []
    for f in runs:
        p = point(json.load(open(f)), eps)
        lv = {}
        for line in open(f[:-5] + '.log'):
            if not line.startswith('LABVAR'):
                continue
            kind, *kv = line.split()[1:]
            kv = dict(x.split('=') for x in kv)
            if int(kv['t']) != t:
                continue
            if kind == 'stage':
                lv[int(kv['m'])] = float(kv['var'])
            if kind == 'nested':
                lv['g'], lv['cs'] = 2 * float(kv['g']), float(kv['cs'])
        e = p['stage_error_mc']
        fac = p['error_mc'] / sum(e)
        total = ((p['ci95_mc'][1] - p['ci95_mc'][0]) / 2 / 1.959964 / fac) ** 2
        R.append(dict(e=e, V2=lv[1], V3=lv[2], later=max(lv['g'], lv['cs']), g=lv['g'], cs=lv['cs'], total=total))
    n = len(R)
    print(f"ε {eps}: {n} seeds")
    for name, err, var in [('stage 1', lambda r: r['e'][0], None), ('stage 2', lambda r: r['e'][1], 'V2'),
                           ('stage 3', lambda r: r['e'][2], 'V3'), ('later', lambda r: r['e'][1] + r['e'][2], 'later'),
                           ('total', lambda r: sum(r['e']), 'total')]:
        es = [err(r) for r in R]
        line = f"  {name:7s} mean {st.mean(es):+.3f} sd {st.stdev(es):.3f} nats"
        if var:
            z = [x / math.sqrt(r[var]) for x, r in zip(es, R)]
            line += f"; the run's own sd {math.sqrt(st.mean(r[var] for r in R)):.3f}, z rms {rms(z):.2f}, |z| > 1.96 in {sum(abs(x) > 1.96 for x in z)}"
        print(line)
    print(f"  corr(stage 2, stage 3) {st.correlation([r['e'][1] for r in R], [r['e'][2] for r in R]):+.2f}, "
          f"corr(stage 1, later) {st.correlation([r['e'][0] for r in R], [r['e'][1] + r['e'][2] for r in R]):+.2f}; "
          f"the genealogy's 2g above the Cauchy–Schwarz bound in {sum(r['g'] > r['cs'] for r in R)} of {n}")
    if len(sys.argv) > 2:
        by = collections.defaultdict(list)
        for f in glob.glob(sys.argv[2] + '/s*-*.json') + runs:
            by[int(f.rsplit('-', 1)[1][:-5])].append(point(json.load(open(f)), eps)['stage_error_mc'])
        by = {s: L for s, L in by.items() if len(L) >= 2}
        within = st.mean(st.variance([x[2] for x in L]) for L in by.values())
        between = st.variance([st.mean(x[2] for x in L) for L in by.values()])
        same = all(len({round(x[1], 9) for x in L}) == 1 for L in by.values())
        print(f"  stage 3 over {len(by)} seeds × {min(map(len, by.values()))}+ redraws: within-seed variance {within:.3f} "
              f"(sd {math.sqrt(within):.2f}), variance of the seed means {between:.3f} (sd {math.sqrt(between):.2f}); "
              f"stage 2 unchanged by the redraws: {same}")
