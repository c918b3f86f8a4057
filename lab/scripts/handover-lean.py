#!/usr/bin/env python3
"""Tallies lab/scripts/handover-lean.sh OUT (three-stage layered toy, one ε): per seed, at the run's own scale s (so
that ĉ's error drops out), each stage's error against exact stage terms from a direct double sum over the active
counts (S_1, S_2), and from the majorants that patches/handover-lean.patch prints, stage 3's start population's
active counts: T_1 (from L_2) and T_1 + S_2 (from L_3), hence the lean of the handed-over units, the mean over
particles of S_2 − E[S_2 | T_1] with E[S_2 | T_1] = d_2 p̃(s √h(T_1/d_1)). Means over seeds with standard errors.
Usage: handover-lean.py OUT..."""
import glob, json, math, re, statistics as st, sys
from math import exp, lgamma, log, log1p


def lse(xs):
    m = max(xs)
    return m + log(sum(exp(x - m) for x in xs))


for out in sys.argv[1:]:
    rows = []
    for f in sorted(glob.glob(out + '/*.json')):
        d = json.load(open(f))
        p = d['points'][0]
        lo, hi = d['box']
        b, g = d['threshold'], d['coupling']
        d1, d2, d3 = (u['count'] * u['dimension'] for u in d['stage_units'])
        D1, D2, m = d1, d1 + d2, (lo + hi) / 2
        txt = open(f[:-5] + '.log').read()
        s = float(re.search(r'stage 3 s (\S+)', txt).group(1))
        pt = lambda a: ((hi - b) + a * (hi * hi - b * b) / 2) / ((hi - lo) + a * (hi * hi - lo * lo) / 2)
        lbin = lambda n, k, q: lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1) + k * log(q) + (n - k) * log1p(-q)
        r = lambda k: exp(g * k / 2)
        lP1 = [lbin(d1, t, pt(s)) for t in range(d1 + 1)]
        lZ2 = [d2 * log1p(s * m * r(t / D1)) for t in range(d1 + 1)]
        term2 = lse([a + z for a, z in zip(lP1, lZ2)])
        js = [a + z - term2 + lbin(d2, k, pt(s * r(t / D1))) + d3 * log1p(s * m * r((t + k) / D2))
              for t, (a, z) in enumerate(zip(lP1, lZ2)) for k in range(d2 + 1)]
        exact = [d1 * log1p(s * m), term2, lse(js)]
        err = [a - e for a, e in zip(p['stage_log_z_mc'], exact)]
        count = lambda L, dm, D: 2 * log(math.expm1(L / dm) / (s * hi)) / g * D
        L2 = [float(x) for x in re.search(r'labL: 3 2 (.*)', txt).group(1).split()]
        L3 = [float(x) for x in re.search(r'labL: 3 3 (.*)', txt).group(1).split()]
        t1 = [round(count(l, d2, D1)) for l in L2]
        t12 = [round(count(l, d3, D2)) for l in L3]
        lean = st.mean((c - a) - d2 * pt(s * r(a / D1)) for a, c in zip(t1, t12))
        rows.append(err + [lean])
    n = len(rows)
    f = lambda i: f"{st.mean(x[i] for x in rows):+.3f} (se {st.stdev(x[i] for x in rows) / n ** 0.5:.3f})"
    print(f"{out}: {n} seeds; stage errors at the run's s (nats) {f(0)}, {f(1)}, {f(2)}; handed-over lean of S_2 {f(3)}")
