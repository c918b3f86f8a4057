#!/usr/bin/env bash
# The softmax stage's tilt function and island size on a deep network (lab log, 4 Dec 2026, sixtieth session): with
# lab/patches/crn-tilt.patch built, runs `ed … --lower --tilt-moves 1600` per seed and arm (one thread each):
#   maj          the landed tilt (the stage majorant)
#   majJ256      the same, the last stage's islands at J = 256 (LAB_LAST_J=128 per replicate); majJ1024 at J = 1 024
#   lpost8       the last stage tilted by a common-random-numbers surrogate: 8 fixed draws of its units from one
#                island at the first outer particle (LAB_CRN=post:8 LAB_CRN_LAST=1); lpost8J256, lpost8J1024 with J = 256, 1 024
#   lprior8J256  the same with 8 uniform draws (LAB_CRN=prior:8)
#   majmoves8    the landed tilt, and `--outer-moves 8` at a stage it did not tilt (with lab/patches/tilt-outer-moves.patch too)
#   post8        every tilted stage by the surrogate (LAB_CRN=post:8); prior8, post8m (mean of logs) likewise
# Usage: ARCH=54-13-11-9-7 N=100 EXTRA="--data synthetic:gaussian --sigma2 0.1" ARMS="maj majJ256" \
#        lab/scripts/crn-tilt.sh BIN OUT SEED...        (tally: lab/scripts/crn-tilt.py OUT)
set -euo pipefail
bin=$1 out=$2; shift 2
mkdir -p "$out"
for seed in "$@"; do
  for arm in ${ARMS:-maj majJ256}; do
    f=$out/$arm-$seed.json
    [ -s "$f" ] && continue
    more=()
    case $arm in
      maj) env=() ;;
      majmoves8) env=(LAB_TILT_AND_MOVES=1); more=(--outer-moves 8) ;;
      majJ256) env=(LAB_LAST_J=128) ;;
      majJ1024) env=(LAB_LAST_J=512) ;;
      lpost8) env=(LAB_CRN=post:8 LAB_CRN_LAST=1) ;;
      lpost8J256) env=(LAB_CRN=post:8 LAB_CRN_LAST=1 LAB_LAST_J=128) ;;
      lpost8J1024) env=(LAB_CRN=post:8 LAB_CRN_LAST=1 LAB_LAST_J=512) ;;
      lprior8J256) env=(LAB_CRN=prior:8 LAB_CRN_LAST=1 LAB_LAST_J=128) ;;
      post8) env=(LAB_CRN=post:8) ;;
      prior8) env=(LAB_CRN=prior:8) ;;
      post8m) env=(LAB_CRN=post:8 LAB_CRN_AGG=mean) ;;
      *) echo "unknown arm $arm" >&2; exit 2 ;;
    esac
    # shellcheck disable=SC2086
    env "${env[@]}" "$bin" ed --arch "${ARCH:-12-6-5-4-3}" --samples "${N:-25}" --eps 1e-3,0.1 --zeta 0.6667 --seed "$seed" \
      --threads 1 --lower --tilt-moves 1600 "${more[@]}" ${EXTRA:-} --json --quiet > "$f.tmp" 2> "$out/$arm-$seed.log"
    mv "$f.tmp" "$f"
  done
done
