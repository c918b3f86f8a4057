#!/usr/bin/env bash
# Three stages of 4 × 25 coordinates (γ = 4), tilted, K = J = 256 by default, ε = EPS (0.1), one seed after another, with
# each stage's start population's majorants printed (lab log, 5 Dec 2026, sixty-fifth session). TWOSCALE_BIN: a
# release build with patches/handover-lean.patch. Usage: lab/scripts/handover-lean.sh OUT FIRST LAST [TOY-FLAGS...]
# (defaults: --inner 256 --paths 256 --tilt-moves 1600; tally: handover-lean.py OUT)
set -euo pipefail
out=$1 a=$2 b=$3; shift 3
bin=${TWOSCALE_BIN:-.build/release/twoscale}
flags=("$@"); [ ${#flags[@]} -gt 0 ] || flags=(--inner 256 --paths 256 --tilt-moves 1600)
mkdir -p "$out"
for seed in $(seq "$a" "$b"); do
  f="$out/$seed.json"
  [ -s "$f" ] && continue
  TWOSCALE_LAB_MAJORANT=1 "$bin" toy --family layered --units 4,4,4 --unit-size 25,25,25 --coupling 4 --eps "${EPS:-0.1}" --mc \
    --seed "$seed" --threads 1 "${flags[@]}" --json > "$f.tmp" 2> "$out/$seed.log"
  mv "$f.tmp" "$f"
done
