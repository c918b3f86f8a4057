#!/usr/bin/env python3
"""The tempered lower 2sED's terms split (lab log, 30 Nov 2026, thirtieth session): reads the stderr lines that
`lab/patches/tempered-lower-size-to-quiet.patch` writes under `TWOSCALE_LAB_TERMS=1` (`TERMS`: stage 1's and the
later term's error against `LayeredToy.exactStages`; `ISL`: each replicate's islands' mean error against the exact
log I_2 at the θ_1 each was given; `TIME`: a run's wall time, from `tempered-lower-terms-bin.sh`). Errors in nats,
± the standard error over seeds. With BASE.log, also the seeds both logs hold, paired.
Usage: lab/scripts/tempered-lower-terms.py RUN.log [BASE.log]"""
import collections, re, statistics as st, sys


def load(path):
    terms, isl, times = {}, collections.defaultdict(list), []
    for line in open(path):
        kv = dict(re.findall(r'(\w+)=(\S+)', line))
        if line.startswith('TERMS'):
            terms[(int(line.split()[1]), int(kv['t']))] = (float(kv['first']), float(kv['term1']), float(kv['sd']))
        elif line.startswith('ISL'):
            isl[(int(line.split()[1]), int(kv['t']))].append((float(kv['islandbias']), float(kv['noise']), int(kv['J'])))
        elif line.startswith('TIME'):
            end, start = (float(x) for x in line.split()[1:3])
            times.append(end - start)
    return terms, isl, times


def ms(xs):
    return "%+.3f ± %.3f" % (st.mean(xs), st.stdev(xs) / len(xs) ** 0.5 if len(xs) > 1 else 0)


def summary(name, run, keys):
    terms, isl, _ = run
    js = collections.Counter(x[2] for k in keys for x in isl[k])
    return (f"  {name}: stage 1 {ms([terms[k][0] for k in keys])}, later term {ms([terms[k][1] for k in keys])} "
            f"(its sd, median {st.median(terms[k][2] for k in keys):.3f}); islands at their θ_1 "
            f"{ms([st.mean(x[0] for x in isl[k]) for k in keys])}, σ̄² median {st.median(x[1] for k in keys for x in isl[k]):.3f}, "
            f"J {dict(sorted(js.items()))}")


run = load(sys.argv[1])
base = load(sys.argv[2]) if len(sys.argv) > 2 else None
if run[2]:
    print(f"{len(run[2])} runs, median {st.median(run[2]):.1f} s")
for t in sorted({k[1] for k in run[0]}):
    keys = sorted(k for k in run[0] if k[1] == t and (base is None or k in base[0]))
    if not keys:
        continue
    print(f"t = {t} ({'smaller' if t == 0 else 'larger'} scale), {len(keys)} seeds")
    print(summary("run", run, keys))
    if base:
        print(summary("base", base, keys))
        print(f"  run − base, later term: {ms([run[0][k][1] - base[0][k][1] for k in keys])}")
