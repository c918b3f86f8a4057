#!/usr/bin/env bash
# The lab log's "Moving the earlier layer", small deep network: for seeds 1…S, the default smc run, the same
# with --outer-moves 16, and a plain reference at --paths 1280, each as OUT/net-SEED-{k64,m16,k1280}.json.
# Then `python3 lab/scripts/outer-moves-net.py OUT` tallies them. Usage: lab/scripts/outer-moves-net.sh OUT [S]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: lab/scripts/outer-moves-net.sh OUT [SEEDS]}
seeds=${2:-20}
bin=${TWOSCALE_BIN:-.build/release/twoscale}
mkdir -p "$out"
for s in $(seq 1 "$seeds"); do
  a=(ed --arch 12-6-5-4-3 --samples 25 --eps 1e-3,0.1 --zeta 0.6667 --lower --seed "$s" --json)
  "$bin" "${a[@]}" > "$out/net-$s-k64.json" 2>/dev/null
  "$bin" "${a[@]}" --outer-moves 16 > "$out/net-$s-m16.json" 2>/dev/null
  "$bin" "${a[@]}" --paths 1280 > "$out/net-$s-k1280.json" 2>/dev/null
  echo "seed $s done"
done
