#!/usr/bin/env bash
# What `--tilt-moves N` costs and moves on the measure study's small MLPs (lab log, 5 Dec 2026, sixty-first session).
# Writes OUT/fash8.csv (the first 128 Fashion-MNIST training images, padded by 2 and average-pooled by 4 to 8×8, as
# the study's grid does), then runs each ARCH under each ARM, one thread a run, two runs at a time:
#   plain, tiltN (--tilt-moves N), nsN (the same with lab/patches/tilt-no-sizing.patch: TWOSCALE_NS_BIN, LAB_TILT_NO_SIZING=1),
#   tempering (ed --estimator tempering, the reference; two threads).
# Usage: lab/scripts/tilt-cost.sh OUT   (ARCHS, ARMS in the environment; prints eps, 2sED, ci95, lower 2sED, seconds;
# NO_LOWER=1 runs `ed` without --lower, sixty-second session; SEED=S sets --seed, default 1, sixty-third)
set -euo pipefail
out=$1
bin=${TWOSCALE_BIN:-.build/release/twoscale}
nsbin=${TWOSCALE_NS_BIN:-$bin}
mkdir -p "$out"
[ -s "$out/fash8.csv" ] || python3 - "$out/fash8.csv" <<'EOF'
import gzip, sys
import numpy as np
b = gzip.open('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz').read()
x = np.frombuffer(b, dtype=np.uint8, offset=16).reshape(-1, 28, 28)[:128] / 255.0
x = np.pad(x, ((0, 0), (2, 2), (2, 2))).reshape(128, 8, 4, 8, 4).mean(axis=(2, 4)).reshape(128, 64)
np.savetxt(sys.argv[1], x, delimiter=',', fmt='%.17g')
EOF
common=(--data "csv:$out/fash8.csv" --shape 8x8x1 --samples 128 --sigma2 0.1 --zeta 0.6667 --eps 0.1548,0.001 --seed "${SEED:-1}" --json)
run() {  # arch arm
  local f="$out/$2-$1.json" b=$bin env=() extra=(--threads 1 --quiet)
  [ "${NO_LOWER:-0}" = 1 ] || extra+=(--lower)
  [ -s "$f" ] && return 0
  case $2 in
    tilt*) extra+=(--tilt-moves "${2#tilt}") ;;
    ns*) b=$nsbin; env=(LAB_TILT_NO_SIZING=1); extra+=(--tilt-moves "${2#ns}") ;;
    tempering) extra=(--estimator tempering --threads 2 --quiet) ;;
  esac
  env "${env[@]}" "$b" ed --arch "$1" "${common[@]}" "${extra[@]}" > "$f.tmp" 2> "$out/$2-$1.log"
  mv "$f.tmp" "$f"
}
jobs=()
for a in ${ARCHS:-8x8x1-19-4-16-10 8x8x1-16-18-10}; do
  for arm in ${ARMS:-plain tilt400 tilt1600 ns400 ns1600}; do
    run "$a" "$arm" & jobs+=($!)
    if [ ${#jobs[@]} -ge 2 ]; then wait "${jobs[0]}"; jobs=("${jobs[@]:1}"); fi
  done
done
wait
python3 - "$out" <<'EOF'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + '/*.json')):
    d = json.load(open(f))
    for p in d['points']:
        lo = p.get('d_zeta_lower')
        print(f.split('/')[-1][:-5], p['eps'], round(p['d_zeta'], 2), [round(x, 2) for x in p['ci95']],
              None if lo is None else round(lo, 2), p.get('stage_island_inner'), round(d['seconds'], 1))
EOF
