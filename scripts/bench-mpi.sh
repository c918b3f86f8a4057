#!/usr/bin/env bash
# Scaling of `twoscale ed` over MPI ranks (release build). Times the same run under `mpirun -np P` for
# P = 1, 2, 4 (one thread per rank; ranks beyond the cores share them) and, for comparison, in one process
# on 1 and 2 threads: best of REPEATS runs each (wall clock, mpirun's start-up included). Prints a Markdown
# table: seconds, speed-up over one rank, efficiency (speed-up / P). Every store is checked against the
# one-process store byte for byte.
#
#   scripts/bench-mpi.sh [REPEATS] [-- ED_ARGS…]
#
# Default workload (about 20 s in one process on one thread on the 2-core machine of docs/PERFORMANCE.md): MLP 54-16-7, Markov FIM, σ² = 0.1,
# N = 100 Gaussian inputs, K = 400 paths, J = 100 inner draws, lower + nested + joint 2sED over a 30-point
# ε grid with 200 bootstrap resamples, spectra store on. With ESTIMATOR=smc: the smc estimator at its default
# budget on 54-16-7 (ε = 10⁻³ and 0.1, lower 2sED), no store, each run's JSON checked against the
# one-process JSON (timing keys aside). Needs Open MPI (scripts/deps.sh installs it).
# MPIRUN_FLAGS overrides the mpirun flags (default: --allow-run-as-root --oversubscribe --bind-to none).
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=3
if [ $# -gt 0 ] && [ "$1" != "--" ]; then repeats=$1; shift; fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
smc=0
[ "${ESTIMATOR:-plain}" = smc ] && smc=1
if [ $# -gt 0 ]; then
    args=("$@")
elif [ $smc = 1 ]; then
    args=(--arch 54-16-7 --data synthetic:gaussian --samples 100 --sigma2 0.1 --eps 0.001,0.1 --lower --seed 1)
else
    args=(--arch 54-16-7 --data synthetic:gaussian --samples 100 --sigma2 0.1 --paths 400 --inner 100
          --eps 1e-3:0.5:30 --lower --bootstrap 200 --seed 1)
fi
command -v mpirun >/dev/null || { echo "bench-mpi.sh: mpirun not found (apt-get install openmpi-bin libopenmpi-dev)" >&2; exit 1; }
swift build -c release >&2
bin=$(readlink -f .build/release/twoscale)
read -r -a flags <<< "${MPIRUN_FLAGS:---allow-run-as-root --oversubscribe --bind-to none}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# best_of LABEL THREADS COMMAND…: the shortest wall time of REPEATS runs (store in $work/LABEL, removed
# before each).
best_of() {
    local label=$1 threads=$2 best="" t0 t1 t
    shift 2
    for _ in $(seq 1 "$repeats"); do
        rm -rf "${work:?}/$label"
        t0=$(date +%s.%N)
        store=(--store "$work/$label")
        [ $smc = 1 ] && store=()
        "$@" "${args[@]}" --threads "$threads" "${store[@]}" --json > "$work/$label.json" 2> "$work/$label.err" \
            || { echo "bench-mpi.sh: $label failed:" >&2; cat "$work/$label.err" >&2; exit 1; }
        t1=$(date +%s.%N)
        t=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
        if [ -z "$best" ] || awk -v t="$t" -v b="$best" 'BEGIN { exit !(t < b) }'; then best=$t; fi
    done
    echo "$best"
}

echo "bench-mpi.sh: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) before; ed ${args[*]}" >&2
one=$(best_of single 1 "$bin" ed)
two=$(best_of threads2 2 "$bin" ed)
declare -A secs
for p in 1 2 4; do
    secs[$p]=$(best_of "np$p" 1 mpirun "${flags[@]}" -np "$p" "$bin" ed)
    if [ $smc = 1 ]; then
        strip='import json,sys; d=json.load(open(sys.argv[1]))
def s(v):
    if isinstance(v, dict): return {k: s(x) for k, x in v.items() if "second" not in k}
    if isinstance(v, list): return [s(x) for x in v]
    return v
print(json.dumps(s(d), sort_keys=True))'
        if [ "$(python3 -c "$strip" "$work/single.json")" != "$(python3 -c "$strip" "$work/np$p.json")" ]; then
            echo "bench-mpi.sh: the JSON of $p ranks differs from the one-process JSON" >&2
            exit 1
        fi
    elif ! diff -r "$work/single" "$work/np$p" >/dev/null; then
        echo "bench-mpi.sh: the store of $p ranks differs from the one-process store" >&2
        exit 1
    fi
done
echo "bench-mpi.sh: load average $(cut -d' ' -f1-3 /proc/loadavg) after; every run equals the one-process run" >&2
printf '| run | seconds (best of %s) | speed-up over 1 rank | efficiency |\n|---|---|---|---|\n' "$repeats"
printf '| one process, `--threads 1` | %.2f | | |\n' "$one"
printf '| one process, `--threads 2` | %.2f | | |\n' "$two"
for p in 1 2 4; do
    s=$(awk -v a="${secs[1]}" -v b="${secs[$p]}" 'BEGIN { print a / b }')
    printf '| `mpirun -np %s`, 1 thread per rank | %.2f | %.2f | %.0f%% |\n' "$p" "${secs[$p]}" "$s" "$(awk -v s="$s" -v p="$p" 'BEGIN { print 100 * s / p }')"
done
