#!/usr/bin/env bash
# Lab: 784-32-10 under --independence-moves (first-layer neurons of 785 weights, proposed in 8 blocks) on a
# lent 16-core machine, where stage 1's 8 items run side by side; then bench p1-smc at a few thread counts
# for the scaling record. Runs from the repo root with .devbin/ carried (lab/scripts/device-bundle.sh).
# LIMIT seconds in all; FM_THREADS, P1_THREADS. Writes $OUT/results.txt (what, threads, wall s, user s, sys s),
# $OUT/fm-sweeps.json and .err (the ed run's JSON and progress lines), $OUT/bench.jsonl.
set -u
START=$(date +%s)
LIMIT=${LIMIT:-570}
B=/tmp/ts; mkdir -p "$B"; tar xJf .devbin/bundle.tar.xz -C "$B" || exit 1
export LD_LIBRARY_PATH=$B/lib
FM_DIR=${FM_DIR:-/usr/share/datasets/fashion-mnist}  # where twoscale reads Fashion-MNIST; a dummy when testing here
mkdir -p "$FM_DIR" && cp .devbin/fm/* "$FM_DIR/"
R=$OUT/results.txt
{ nproc; grep -m1 "model name" /proc/cpuinfo; lscpu | grep -E "Thread|Core|Socket"; free -g | head -2; } > "$R"
left() { echo $(( LIMIT - ($(date +%s) - START) )); }
timed() { # label threads out err command...
  local label=$1 threads=$2 out=$3 err=$4; shift 4
  local l; l=$(left)
  [ "$l" -gt 15 ] || { echo "$label $threads skipped (time)" >> "$R"; return; }
  local t0; t0=$(date +%s.%N)
  ( TIMEFORMAT="%U %S"; time timeout "$l" "$@" >> "$out" 2>> "$err" ) 2> "$B/t"
  local rc=$? t1; t1=$(date +%s.%N)
  echo "$label $threads $(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") $(tail -1 "$B/t") rc=$rc" >> "$R"
}
for t in ${FM_THREADS:-16}; do
  timed fm-sweeps "$t" "$OUT/fm-sweeps.json" "$OUT/fm-sweeps.err" "$B/twoscale-main" ed --arch 784-32-10 \
    --data fashion-mnist --samples 100 --sigma2 0.1 --eps 0.001,0.1 --seed 1 --independence-moves --threads "$t" --json
done
for t in ${P1_THREADS:-16 8 2}; do
  timed p1-smc "$t" "$OUT/bench.jsonl" "$B/bench.err" "$B/twoscale-main" bench p1-smc --threads "$t" --json --quiet
done
cat "$R"
