#!/usr/bin/env python3
"""Lab: reads a trace written by a build of branch lab/parallel-trace (TWOSCALE_PARALLEL_TRACE=FILE: one JSON
line per parallel loop with its item durations) and prints each top-level loop's items, wall time and the sum
of its items, and what list scheduling of the same items would take on n threads, with the time outside the
loops added (WALL: the run's wall time). Items that take longer at many threads than in a one-thread trace
of the same run show contention.
Usage: lab/scripts/parallel-trace-summary.py TRACE.jsonl WALL"""
import heapq
import json
import sys

loops = [json.loads(line) for line in open(sys.argv[1])]
wall = float(sys.argv[2])


def scheduled(items, n):
    n = max(1, min(n, len(items)))
    free = [0.0] * n
    for d in items:
        heapq.heappush(free, heapq.heappop(free) + d)
    return max(free)


top = [l for l in loops if l["depth"] == 0]
for l in loops:
    it = l["items"]
    print(f"depth {l['depth']} items {l['count']:6d} wall {l['wall']:8.2f} s  items sum {sum(it):8.2f} s  longest {max(it) if it else 0:6.2f} s")
outside = wall - sum(l["wall"] for l in top)
print(f"outside the loops: {outside:.2f} s of {wall:.2f} s")
for n in (1, 2, 4, 8, 16, 32):
    print(f"{n:3d} threads: {outside + sum(scheduled(l['items'], n) for l in top):8.2f} s")
