#!/usr/bin/env bash
# Runs `twoscale ed` as a SLURM job array of N shards and a merge job that starts when every shard has
# succeeded (sbatch --dependency=afterok). The merged store is byte-identical to the store of
# `twoscale ed ED_ARGS --store OUT` run in one process.
#
#   scripts/slurm-array.sh submit N OUT -- ED_ARGS…   submit the array (N tasks) and the dependent merge job
#   scripts/slurm-array.sh shard OUT -- ED_ARGS…      inside an array task: compute this task's shard
#   scripts/slurm-array.sh merge OUT                  the merge job: join OUT.shards/task-* into OUT
#
# Example (8 shards of 1000 paths, then the merge; analyze the result as any store):
#   scripts/slurm-array.sh submit 8 runs/big -- --arch 784-64-10 --data fashion-mnist --samples 1000 \
#       --paths 1000 --inner 100 --sigma2 0.1 --seed 1
#   twoscale analyze runs/big --eps 1e-4:0.5:40 --lower --json
#
# Each task runs `twoscale ed ED_ARGS --shard auto --resume --store OUT.shards/task-$SLURM_ARRAY_TASK_ID`:
# `--shard auto` reads shard i/N from SLURM's array variables, and `--resume` makes a requeued or resubmitted
# task continue from its finished paths. ED_ARGS must not contain --store, --shard or --resume.
#
# Settings (environment variables):
#   TWOSCALE            the twoscale binary (default: this checkout's .build/release/twoscale, else twoscale
#                       on PATH); resolved to an absolute path at submission
#   TWOSCALE_LAUNCHER   words put before twoscale in each task, e.g. "mpirun" or "srun --mpi=pmix" to run each
#                       shard as an MPI job over the task's ranks (see docs/GUIDE.md, "Beyond one machine")
#   TWOSCALE_SBATCH     extra sbatch words for both jobs, e.g. "--time=12:00:00 --cpus-per-task=8"
#   SBATCH_PARTITION, SBATCH_ACCOUNT, SBATCH_TIMELIMIT, …   read by sbatch itself
#   SBATCH              the sbatch command (default: sbatch)
# Task logs go to OUT.shards/slurm-JOB_TASK.out, the merge job's to OUT.shards/slurm-merge-JOB.out.
set -euo pipefail

usage() {
    sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

self=$(readlink -f "$0")
root=$(dirname "$(dirname "$self")")

binary() {
    local b=${TWOSCALE:-}
    if [ -z "$b" ]; then
        if [ -x "$root/.build/release/twoscale" ]; then b="$root/.build/release/twoscale"; else b=twoscale; fi
    fi
    if [[ "$b" == */* ]]; then
        [ -x "$b" ] || { echo "slurm-array.sh: TWOSCALE=$b is not an executable" >&2; exit 1; }
        readlink -f "$b"
    else
        command -v "$b" >/dev/null || { echo "slurm-array.sh: $b is not on PATH; build it (swift build -c release) or set TWOSCALE" >&2; exit 1; }
        command -v "$b"
    fi
}

# Refuses ED_ARGS that the script sets itself.
check_args() {
    for a in "$@"; do
        case "$a" in
            --store|--store=*|--shard|--shard=*|--resume)
                echo "slurm-array.sh: leave $a out of the ed arguments: the script sets --store, --shard auto and --resume" >&2
                exit 2 ;;
        esac
    done
}

# The words of a command, quoted for sh.
quoted() {
    local out="" a
    for a in "$@"; do out+="'${a//\'/\'\\\'\'}' "; done
    printf '%s' "${out% }"
}

mode=${1:-}
[ -n "$mode" ] || usage
shift
case "$mode" in
    submit)
        [ $# -ge 3 ] && [ "$3" = "--" ] || usage
        n=$1 out=$2
        shift 3
        [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "slurm-array.sh: N must be a whole number ≥ 1 (got '$n')" >&2; exit 2; }
        check_args "$@"
        bin=$(binary)
        mkdir -p "$out.shards"
        out=$(readlink -f "$out")
        sbatch=${SBATCH:-sbatch}
        # shellcheck disable=SC2086
        array=$($sbatch --parsable --job-name=twoscale-ed --array="1-$n" ${TWOSCALE_SBATCH:-} \
            --output="$out.shards/slurm-%A_%a.out" \
            --wrap="TWOSCALE=$(quoted "$bin") exec $(quoted "$self" shard "$out" -- "$@")")
        array=${array%%;*}  # --parsable prints JOB or JOB;CLUSTER
        # shellcheck disable=SC2086
        merge=$($sbatch --parsable --job-name=twoscale-merge --dependency="afterok:$array" ${TWOSCALE_SBATCH:-} \
            --output="$out.shards/slurm-merge-%j.out" \
            --wrap="TWOSCALE=$(quoted "$bin") exec $(quoted "$self" merge "$out")")
        merge=${merge%%;*}
        echo "submitted array job $array (shards 1-$n into $out.shards) and merge job $merge (into $out, after all shards succeed)"
        ;;
    shard)
        [ $# -ge 2 ] && [ "$2" = "--" ] || usage
        out=$1
        shift 2
        check_args "$@"
        [ -n "${SLURM_ARRAY_TASK_ID:-}" ] || { echo "slurm-array.sh shard: SLURM_ARRAY_TASK_ID is not set; this mode runs inside a SLURM array task" >&2; exit 2; }
        bin=$(binary)
        mkdir -p "$out.shards"
        # shellcheck disable=SC2086
        exec ${TWOSCALE_LAUNCHER:-} "$bin" ed "$@" --shard auto --resume --store "$out.shards/task-$SLURM_ARRAY_TASK_ID"
        ;;
    merge)
        [ $# -eq 1 ] || usage
        out=$1
        bin=$(binary)
        shopt -s nullglob
        shards=("$out".shards/task-*)
        [ ${#shards[@]} -gt 0 ] || { echo "slurm-array.sh merge: no shard stores in $out.shards" >&2; exit 1; }
        exec "$bin" merge "${shards[@]}" --out "$out"
        ;;
    -h|--help|help) usage ;;
    *) echo "slurm-array.sh: unknown mode '$mode' (submit, shard or merge)" >&2; exit 2 ;;
esac
