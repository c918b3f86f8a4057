#!/bin/bash
# Stage 1's error (nats, ε = 10⁻³ and 0.1) on two units of 100 coordinates (stage 2: one unit of one
# coordinate), 16 seeds per setting: the defaults, 40 and 80 stage-1 sweeps, K = 128. One line per run:
# setting, seed, the two errors, stage 1's smallest decorrelation (lab/ESTIMATORS-LOG.md, 6 Dec 2026,
# seventy-seventh session). Usage: lab/scripts/stage1-lean.sh OUT.txt; TWOSCALE_BIN names the binary.
out=${1:?usage: lab/scripts/stage1-lean.sh OUT.txt}
cd "$(dirname "$0")/../.."
bin=${TWOSCALE_BIN:-.build/release/twoscale}
for cfg in "base:" "sw40:--stage1-sweeps 40" "sw80:--stage1-sweeps 80" "k128:--paths 128"; do
  name=${cfg%%:*}; flags=${cfg#*:}
  for seed in $(seq 1 16); do
    "$bin" toy --family layered --units 2,1 --unit-size 100,1 --eps 0.001,0.1 --mc --seed $seed --json --quiet $flags 2>/dev/null | python3 -c "
import json,sys;d=json.load(sys.stdin)
print('$name',$seed,' '.join('%.4f'%p['stage_error_mc'][0] for p in d['points']), '%.3f'%d['monte_carlo']['smc']['stage1']['min_decorrelation'])" >> "$out"
  done
done
