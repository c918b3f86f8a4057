#!/usr/bin/env bash
# Plain smc against the surrogate-tempered later stages on one layered-toy shape, seed by seed (lab log, 4 Dec 2026,
# fifty-fourth session). Needs a build with lab/patches/surrogate-tempering.patch applied (TWOSCALE_BIN); arm `rw`
# sets TWOSCALE_LAB_SURROGATE, TWOSCALE_LAB_SURROGATE_RW and TWOSCALE_LAB_SURROGATE_PROPOSALS (default 400), arm `all`
# TWOSCALE_LAB_SURROGATE_ALL besides (the moves reach every earlier stage's units). ARMS: the arms run (default "plain rw").
# Usage: lab/scripts/surrogate-pairs.sh OUT FIRST LAST TOY-FLAGS...   (one thread per run)
set -euo pipefail
out=$1 a=$2 b=$3; shift 3
bin=${TWOSCALE_BIN:-.build/release/twoscale}
mkdir -p "$out"
for seed in $(seq "$a" "$b"); do
  for arm in ${ARMS:-plain rw}; do
    f="$out/$arm-$seed.json"
    [ -s "$f" ] && continue
    unset TWOSCALE_LAB_SURROGATE TWOSCALE_LAB_SURROGATE_RW TWOSCALE_LAB_SURROGATE_PROPOSALS TWOSCALE_LAB_SURROGATE_ALL
    if [ "$arm" != plain ]; then
      export TWOSCALE_LAB_SURROGATE=1 TWOSCALE_LAB_SURROGATE_RW=1 TWOSCALE_LAB_SURROGATE_PROPOSALS=${PROPOSALS:-400}
    fi
    if [ "$arm" = all ]; then export TWOSCALE_LAB_SURROGATE_ALL=1; fi
    t0=$(date +%s)
    "$bin" toy --family layered "$@" --eps 0.001,0.1 --mc --seed "$seed" --threads 1 --json > "$f.tmp" 2> "$out/$arm-$seed.log"
    mv "$f.tmp" "$f"
    echo "$(( $(date +%s) - t0 )) s" >> "$out/$arm-$seed.log"
  done
done
