#!/usr/bin/env bash
# Lab: smc's wall time against the thread count on a 16-core machine (the precision issue's scaling item).
# Runs from the repo root on the lent device machine, with .devbin/ carried (made by lab/scripts/device-bundle.sh):
# bundle.tar.xz holds release builds (twoscale-main: the commit measured; twoscale-trace: the same with the
# lab timing hook of branch lab/parallel-trace) and the shared libraries they link; fm/ the first 2000
# Fashion-MNIST training images. Threads per run: P1_THREADS, FM_THREADS, P1_LATER; LIMIT seconds in all.
# Writes $OUT/results.txt (workload, threads, wall s, user s, sys s), $OUT/bench.jsonl, $OUT/trace-*.jsonl.
set -u
START=$(date +%s)
LIMIT=${LIMIT:-235}
B=/tmp/ts; mkdir -p "$B"; tar xJf .devbin/bundle.tar.xz -C "$B" || exit 1
export LD_LIBRARY_PATH=$B/lib
mkdir -p /usr/share/datasets/fashion-mnist && cp .devbin/fm/* /usr/share/datasets/fashion-mnist/
R=$OUT/results.txt
{ nproc; grep -m1 "model name" /proc/cpuinfo; grep -c processor /proc/cpuinfo; free -g | head -2; } > "$R"
run() { # bin workload threads [trace]
  local left=$(( LIMIT - ($(date +%s) - START) ))
  [ "$left" -gt 20 ] || { echo "$2 $3 skipped (time)" >> "$R"; return; }
  local env=(); [ -n "${4:-}" ] && env=(TWOSCALE_PARALLEL_TRACE=$OUT/trace-$2.jsonl)
  local t0=$(date +%s.%N)
  ( TIMEFORMAT="%U %S"; time env "${env[@]}" timeout "$left" "$B/$1" bench "$2" --threads "$3" --json --quiet >> "$OUT/bench.jsonl" ) 2> "$B/t"
  local rc=$? t1=$(date +%s.%N)
  echo "$2 $3 $1 $(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") $(tail -1 "$B/t") rc=$rc" >> "$R"
}
for t in ${P1_THREADS:-16 2 1}; do run twoscale-main p1-smc $t; done
for t in ${FM_THREADS:-16}; do run twoscale-trace fmnist-smc $t trace; done
for t in ${P1_LATER:-8}; do run twoscale-main p1-smc $t; done
cat "$R"
