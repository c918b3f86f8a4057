"""Tallies lab/scripts/outer-moves-net.sh's runs: per seed and ε the reference (plain, K = 1280), the default
and the moved (--outer-moves 16) estimates with whether the reference lies in their 95% intervals, then per ε
how often it did, mean errors and half-widths, and z = (estimate − reference)/√(se² + se_ref²).
Usage: python3 lab/scripts/outer-moves-net.py OUT"""
import json, os, sys
out = sys.argv[1] if len(sys.argv) > 1 else "."
rows = []
for s in range(1, 21):
    f = {k: os.path.join(out, 'net-%d-%s.json' % (s, k)) for k in ('k64', 'm16', 'k1280')}
    if not all(os.path.exists(v) and os.path.getsize(v) > 0 for v in f.values()):
        continue
    d = {k: json.load(open(v)) for k, v in f.items()}
    for i, p in enumerate(d['k1280']['points']):
        ref = p['d_zeta']
        a = d['k64']['points'][i]; b = d['m16']['points'][i]
        ha = (a['ci95'][1] - a['ci95'][0]) / 2; hb = (b['ci95'][1] - b['ci95'][0]) / 2
        rows.append((s, p['eps'], ref, a['d_zeta'], a['ci95'][0] <= ref <= a['ci95'][1], ha,
                     b['d_zeta'], b['ci95'][0] <= ref <= b['ci95'][1], hb,
                     [round(x, 1) for x in p['stage_ess']], [round(x, 1) for x in a['stage_ess']],
                     [m['steps'] for m in b['stage_moves']]))
for r in rows:
    print('seed %d eps %g ref %.2f | plain %.2f %s hw %.2f | moved %.2f %s hw %.2f | ess640/1280 %s ess64 %s steps %s' % r)
import statistics as st
zs = {}
for s_ in range(1, 21):
    f = {k: os.path.join(out, 'net-%d-%s.json' % (s_, k)) for k in ('k64', 'm16', 'k1280')}
    if not all(os.path.exists(v) and os.path.getsize(v) > 0 for v in f.values()): continue
    d = {k: json.load(open(v)) for k, v in f.items()}
    for i, p in enumerate(d['k1280']['points']):
        hr = (p['ci95'][1] - p['ci95'][0]) / 2 / 1.96
        for k in ('k64', 'm16'):
            q = d[k]['points'][i]; h = (q['ci95'][1] - q['ci95'][0]) / 2 / 1.96
            zs.setdefault((p['eps'], k), []).append((q['d_zeta'] - p['d_zeta']) / (h * h + hr * hr) ** 0.5)
for key, v in sorted(zs.items()):
    print('z', key, 'n', len(v), 'mean %.2f sd %.2f' % (st.mean(v), st.pstdev(v)), '|z|<1.96:', sum(abs(x) < 1.96 for x in v))
for e in (1e-3, 0.1):
    rr = [r for r in rows if r[1] == e]
    if not rr: continue
    n = len(rr)
    print('eps', e, 'n', n, 'plain held', sum(r[4] for r in rr), 'moved held', sum(r[7] for r in rr),
          'plain mean err %.2f' % (sum(r[3] - r[2] for r in rr) / n), 'moved mean err %.2f' % (sum(r[6] - r[2] for r in rr) / n),
          'plain mean hw %.2f' % (sum(r[5] for r in rr) / n), 'moved mean hw %.2f' % (sum(r[8] for r in rr) / n))
