#!/bin/bash
# Pools of islands at one θ_1 of a two-stage layered toy (lab/ESTIMATORS-LOG.md, 30 Nov 2026, twenty-seventh
# session). Needs lab/patches/island-pool.patch applied and `swift build --build-tests`.
# Usage: lab/scripts/island-pool.sh UNIT_SIZE UNITS COUPLING STOP OUT.csv
#   LAB_SWEEPS, LAB_REPL and LAB_INDEP=1 set the islands' sweeps, replicates and independence moves.
#   STOP 0 is the smaller scale (ε = 0.1), 1 the larger (ε = 10⁻³). Writes 2 000, 1 000, 500 and 250 islands at
#   J = 32, 64, 128 and 256; columns: tag (LAB_TAG, default "default"), unit size, units, coupling, stop, J, k, exact log Z_2, logZ, lower, noise.
set -euo pipefail
[ $# -eq 5 ] || { sed -n 2,7p "$0"; exit 2; }
out=$5; touch "$out"; base=100000
for fc in "1 2000" "2 1000" "4 500" "8 250"; do
    set -- "$1" "$2" "$3" "$4" "$5" $fc
    LAB_POOL="$1,$2,$3,$4,32,$6,$7,$base" LAB_OUT="$out" swift test --skip-build --filter LabIslandPool 2>&1 | grep -E "passed after|failed" | head -1
    base=$((base + 100000))
done
