#!/usr/bin/env bash
# The smc estimator's island sizing with and without a gate on the earlier later stages' rule (lab log,
# 2 Dec 2026, forty-seventh session). Needs a build with lab/patches/sizing-gate.patch applied (TWOSCALE_BIN);
# ARM `gated` sets TWOSCALE_EXPERIMENT_SIZING_GATE, `sized` runs the default. One toy JSON per seed in OUT.
# Usage: lab/scripts/sizing-gate.sh OUT ARM UNITS SIZES SEED... (further toy flags in $EXTRA)
set -euo pipefail
out=$1 arm=$2 units=$3 sizes=$4; shift 4
bin=${TWOSCALE_BIN:-.build/release/twoscale}
mkdir -p "$out"
for s in "$@"; do
  f="$out/$arm-$units-$sizes-$s.json"
  [ -s "$f" ] && continue
  if [ "$arm" = gated ]; then export TWOSCALE_EXPERIMENT_SIZING_GATE=1; else unset TWOSCALE_EXPERIMENT_SIZING_GATE; fi
  t0=$(date +%s)
  "$bin" toy --family layered --units "$units" --unit-size "$sizes" --eps 0.001,0.1 --mc --trials 1 --seed "$s" --json \
    --threads 1 --independence-moves ${EXTRA:-} > "$f.tmp" 2> "${f%.json}.log"
  mv "$f.tmp" "$f"
  echo "$arm $s $(( $(date +%s) - t0 ))" >> "$out/times.txt"
done
