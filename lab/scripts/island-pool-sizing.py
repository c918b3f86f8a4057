#!/usr/bin/env python3
"""The smc estimator's island sizing (StagedSMC.sizedIslands) simulated on pools of islands at one θ_1
(lab/scripts/island-pool.sh; lab/ESTIMATORS-LOG.md, 30 Nov 2026, twenty-seventh session).

Per J the pool's mean errors against the exact log Z_2 (± standard error). Then RUNS stages of K islands drawn
from the pools: J chosen as sizedIslands does (a pilot of 16 islands, J doubled while their mean noise
exceeds 1 nat², up to 8 times the smallest J; the stage rerun at twice the J where all K are still above 1),
the pilot's islands either kept (A, as on main) or replaced by fresh ones (B, a pilot on streams of its own).
Errors of the 2sED's stage term (log-mean of exp(logZ) less the power excess) and of the lower term (mean of
the islands' lower), over all runs and over those whose stage σ̄² passes the gate (≤ 1).
Usage: lab/scripts/island-pool-sizing.py POOL.csv [K=64] [RUNS=20000] [SEED=1]"""
import collections, csv, math, random, statistics as st, sys

pool = collections.defaultdict(list)
for r in csv.reader(open(sys.argv[1])):
    r = r[1:]  # the variant's tag
    units, exact = int(r[1]), float(r[6])
    pool[int(r[4])].append((float(r[7]), float(r[8]), float(r[9])))
K = int(sys.argv[2]) if len(sys.argv) > 2 else 64
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
J0, P, f = min(pool), 16, (1 - 1 / units) / 2
cap = 8 * J0
for J in sorted(pool):
    v = pool[J]; n = len(v)
    lo = [x[1] - exact for x in v]; lz = [x[0] - exact for x in v]; nz = [x[2] for x in v]
    print("J %4d: %4d islands, lower %+.3f ± %.3f, logZ %+.3f ± %.3f (sd %.2f), noise mean %.3f median %.3f, P(noise ≤ 1) %.2f" % (
        J, n, st.mean(lo), st.stdev(lo) / n ** .5, st.mean(lz), st.stdev(lz) / n ** .5, st.stdev(lz), st.mean(nz), st.median(nz),
        sum(x <= 1 for x in nz) / n))
rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
draw = lambda J, n: [rng.choice(pool[J]) for _ in range(n)]
noise = lambda isl: sum(x[2] for x in isl) / len(isl)


def errors(isl):
    m = max(x[0] for x in isl)
    return (m + math.log(sum(math.exp(x[0] - m) for x in isl) / len(isl)) - f * noise(isl) - exact,
            sum(x[1] for x in isl) / len(isl) - exact)


res = {"A": [], "B": []}
for _ in range(runs):
    J = J0; pilot = draw(J, P)
    while noise(pilot) > 1 and 2 * J <= cap and 2 * J in pool:
        J *= 2; pilot = draw(J, P)
    rest = draw(J, K - P)
    for name, isl in (("A", pilot + rest), ("B", draw(J, P) + rest)):
        JJ = J
        if noise(isl) > 1 and 2 * JJ <= cap and 2 * JJ in pool:
            JJ *= 2; isl = draw(JJ, K)
        res[name].append(errors(isl) + (noise(isl) <= 1, JJ))
for name, v in res.items():
    g = [x for x in v if x[2]]
    print("%s (%s): 2sED term %+.4f (sd %.3f), lower %+.4f (sd %.3f); gate passed in %.3f: %+.4f, %+.4f; J %s" % (
        name, "pilot kept" if name == "A" else "pilot fresh", st.mean(x[0] for x in v), st.pstdev(x[0] for x in v),
        st.mean(x[1] for x in v), st.pstdev(x[1] for x in v), len(g) / len(v),
        st.mean(x[0] for x in g) if g else float("nan"), st.mean(x[1] for x in g) if g else float("nan"),
        dict(sorted(collections.Counter(x[3] for x in v).items()))))
