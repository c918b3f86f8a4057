#!/usr/bin/env bash
# `ed --chains R` on a small deep network against joint tempering, seed by seed (lab log, 4 Dec 2026, fifty-ninth
# session). Per seed: the reference (`--estimator tempering`, P = 128, R = 8; its own streams, but ĉ from the smc draws at
# the same seed, so it shares chain 0's ĉ) and the smc estimator
# with each arm of CHAINS (default "1 4 8"): R, R chains; tNcR, `--tilt-moves N` and R chains. STEP=n runs every n-th seed from FIRST (two lanes: FIRST and FIRST+1, STEP=2).
# Usage: lab/scripts/chains-net.sh OUT FIRST LAST ED-FLAGS...   (one thread per run; tally: chains-net.py OUT)
set -euo pipefail
out=$1 a=$2 b=$3; shift 3
bin=${TWOSCALE_BIN:-.build/release/twoscale}
mkdir -p "$out"
for seed in $(seq "$a" "${STEP:-1}" "$b"); do
  for arm in ref ${CHAINS:-1 4 8}; do
    f="$out/$arm-$seed.json"
    [ -s "$f" ] && continue
    case $arm in
      ref) extra=(--estimator tempering --paths 128 --inner 8) ;;
      t*c*) n=${arm#t}; extra=(--lower --tilt-moves "${n%c*}" --chains "${arm##*c}") ;;
      *) extra=(--lower --chains "$arm") ;;
    esac
    t0=$(date +%s)
    "$bin" ed "$@" --seed "$seed" --threads 1 "${extra[@]}" --json --quiet > "$f.tmp" 2> "$out/$arm-$seed.log"
    mv "$f.tmp" "$f"
    echo "$(( $(date +%s) - t0 )) s" >> "$out/$arm-$seed.log"
  done
done
