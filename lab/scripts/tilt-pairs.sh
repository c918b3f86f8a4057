#!/usr/bin/env bash
# Plain smc against `--tilt-moves N` on one layered-toy shape, seed by seed (lab log, 4 Dec 2026, fifty-fifth
# session). ARMS: the arms run, `plain`, `tiltN` (N proposals per particle and step; default "plain tilt400") or
# `tiltNcR` (and R independent chains of the later stages, `--chains R`; fifty-sixth session) or `tiltNpK` (and K outer
# particles, `--paths K`; sixty-fourth session) or `plainpK` (untilted, K outer particles; sixty-fifth session). EPS: the ε grid (default 0.001,0.1).
# Usage: lab/scripts/tilt-pairs.sh OUT FIRST LAST TOY-FLAGS...   (one thread per run; tally: tilt-summary.py OUT)
set -euo pipefail
out=$1 a=$2 b=$3; shift 3
bin=${TWOSCALE_BIN:-.build/release/twoscale}
mkdir -p "$out"
for seed in $(seq "$a" "$b"); do
  for arm in ${ARMS:-plain tilt400}; do
    f="$out/$arm-$seed.json"
    [ -s "$f" ] && continue
    extra=()
    case $arm in
      tilt*c*) n=${arm#tilt}; extra=(--tilt-moves "${n%c*}" --chains "${arm##*c}") ;;
      tilt*p*) n=${arm#tilt}; extra=(--tilt-moves "${n%p*}" --paths "${arm##*p}") ;;
      tilt*) extra=(--tilt-moves "${arm#tilt}") ;;
      plainp*) extra=(--paths "${arm#plainp}") ;;
    esac
    t0=$(date +%s)
    "$bin" toy --family layered "$@" --eps "${EPS:-0.001,0.1}" --mc --seed "$seed" --threads 1 "${extra[@]}" --json > "$f.tmp" 2> "$out/$arm-$seed.log"
    mv "$f.tmp" "$f"
    echo "$(( $(date +%s) - t0 )) s" >> "$out/$arm-$seed.log"
  done
done
