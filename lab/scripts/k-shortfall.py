#!/usr/bin/env python3
"""The later stage's error of a multi-stage-rule.py CSV against the log-mean shortfall of K lognormal weights.

For each row, the outer log-weights' spread s² (column log_var) gives the expected shortfall
E[log mean_k w_k] − log E[w] of K independent weights whose logs are Gaussian with variance s², by
simulation (stdlib only); beside it the row's last stage error (column stage_err, nats). Means per ε.

usage: k-shortfall.py CSV [K=64] [REPS=4000]
"""
import csv, math, random, sys
from collections import defaultdict

def shortfall(s2, k, reps, rng):
    s, total = math.sqrt(s2), 0.0
    for _ in range(reps):
        z = [rng.gauss(0.0, s) - s2 / 2 for _ in range(k)]
        m = max(z)
        total += m + math.log(sum(math.exp(x - m) for x in z) / k)
    return total / reps

def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    k = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 4000
    rng = random.Random(1)
    per = defaultdict(list)
    print("seed,eps,log_var,predicted,observed")
    for row in csv.DictReader(open(path)):
        if not row.get("log_var") or not row.get("stage_err"):
            continue
        s2 = float(row["log_var"])
        observed = float(row["stage_err"].split(";")[-1])
        predicted = shortfall(s2, k, reps, rng)
        per[row["eps"]].append((predicted, observed))
        print(f"{row['seed']},{row['eps']},{s2:.2f},{predicted:.2f},{observed:.2f}")
    for eps, v in per.items():
        n = len(v)
        print(f"# eps {eps}: {n} rows, mean predicted {sum(p for p, _ in v) / n:.2f} nats, "
              f"mean observed {sum(o for _, o in v) / n:.2f}")

if __name__ == "__main__":
    main()
