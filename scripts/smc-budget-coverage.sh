#!/usr/bin/env bash
# The smc estimator's interval against a larger budget, over many seeds (lab/ESTIMATORS-LOG.md, "What has
# been measured"): for each seed, `ed --estimator smc` at the default budget (K = 64) and at K = REF
# (default 1920, 30×), then the share of seeds whose default 95% interval holds the larger run's
# estimate, per ε and for the 2sED and the lower 2sED, and how often the reported interval (`interval`: the sampled
# one where the rule lets it stand, else the bracket) does. --seed draws the data and the noise too, so each seed is its own network problem with its own
# 30× reference.
#
#   scripts/smc-budget-coverage.sh [OUTDIR] [SEEDS] [ARCH] [SAMPLES] [REF] [REF_INNER] [DATA]
#
# Defaults: /tmp/smc-coverage, 20 seeds, 30-10-5, N = 50 (about 65 s per seed on 2 cores), the reference
# with the default J = 32 island particles. Raising only K cannot show a bias of the islands' own logs
# (docs/ESTIMATORS.md §3): give REF_INNER to raise J in the reference too. DATA is --data's source
# (default synthetic:gaussian; e.g. fashion-mnist with an image ARCH). Runs already in OUTDIR are kept
# (rerun to continue). Needs a release build (swift build -c release; TWOSCALE_BIN=PATH runs another binary)
# and python3.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-/tmp/smc-coverage}"; seeds="${2:-20}"; arch="${3:-30-10-5}"; samples="${4:-50}"; ref="${5:-1920}"; ref_inner="${6:-32}"; data="${7:-synthetic:gaussian}"
bin="${TWOSCALE_BIN:-$here/.build/release/twoscale}"
[ -x "$bin" ] || { echo "no release build at $bin: run swift build -c release" >&2; exit 2; }
mkdir -p "$out"
# The reference's file is named by its K, and by its J too when that is not the default.
ref_tag="K${ref}"; [ "$ref_inner" = 32 ] || ref_tag="K${ref}_J${ref_inner}"
for seed in $(seq 1 "$seeds"); do
  for run in "K64 64 32" "$ref_tag $ref $ref_inner"; do
    set -- $run
    f="$out/s${seed}_$1.json"
    [ -s "$f" ] && continue
    "$bin" ed --arch "$arch" --data "$data" --samples "$samples" --sigma2 0.1 --zeta 0.6667 --seed "$seed" \
      --estimator smc --paths "$2" --inner "$3" --eps 0.001,0.1 --lower --json > "$f.tmp" 2> "$out/s${seed}_$1.err"
    mv "$f.tmp" "$f"
  done
done
python3 - "$out" "$seeds" "$ref" "$ref_inner" "$ref_tag" <<'PY'
import json, sys, os
out, seeds, ref_k, ref_j, ref_tag = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
big = f"{int(ref_k) * ref_j // (64 * 32)}x"
held, total, zs, overlap, narrower = {}, {}, [], 0, 0
reported, fallbacks = {}, {}
for seed in range(1, seeds + 1):
    a = json.load(open(os.path.join(out, f"s{seed}_K64.json")))
    b = json.load(open(os.path.join(out, f"s{seed}_{ref_tag}.json")))
    for pa, pb in zip(a["points"], b["points"]):
        for key, ci in [("d_zeta", "ci95"), ("d_zeta_lower", "ci95_lower")]:
            lo, hi = pa[ci]; ref = pb[key]; lo2, hi2 = pb[ci]
            k = (pa["eps"], key)
            total[k] = total.get(k, 0) + 1
            held[k] = held.get(k, 0) + (lo <= ref <= hi)
            # The interval ed reports (the sampled one where the rule lets it stand, else the bracket).
            rk = "interval" if key == "d_zeta" else "interval_lower"
            if rk in pa:
                rlo, rhi = pa[rk]
                reported[k] = reported.get(k, 0) + (rlo <= ref <= rhi)
                fallbacks[k] = fallbacks.get(k, 0) + (pa.get(rk + "_source") == "bracket")
            zs.append((pa[key] - ref) / ((hi - lo) / 3.92))
            overlap += hi >= lo2 and hi2 >= lo
            narrower += (hi2 - lo2) < (hi - lo)
            if not lo <= ref <= hi:
                print(f"seed {seed} eps {pa['eps']} {key}: default {pa[key]:.3f} [{lo:.3f}, {hi:.3f}], {big} {ref:.3f}: misses by {(lo - ref if ref < lo else ref - hi):.3f} (outer ESS {pa['stage_ess'][0]:.1f})")
for k in sorted(total):
    print(f"eps {k[0]} {k[1]}: the default interval holds the {big} estimate in {held[k]} of {total[k]} seeds"
          + (f"; the reported one in {reported[k]} ({fallbacks[k]} of them the bracket)" if k in reported else ""))
n = len(zs); m = sum(zs) / n; sd = (sum((z - m) ** 2 for z in zs) / (n - 1)) ** 0.5
print(f"(default - {big}) / default se over {n} checks: mean {m:.2f}, sd {sd:.2f}; intervals overlap in {overlap}, the {big} one narrower in {narrower}")
PY
