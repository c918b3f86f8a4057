#!/usr/bin/env bash
# A private single-node SLURM cluster on this machine, for trying scripts/slurm-array.sh (and for the test
# that submits a real job array): its own munged (own key and socket), slurmctld and slurmd, with every
# file — configuration, state, logs, pid files — inside DIR, on ports of its own. Nothing under /etc is
# touched and no system service is started. Needs Debian's slurm-wlm (slurmctld, slurmd, sbatch; munge
# comes with it) and root (slurmd runs jobs as their users).
#
#   scripts/slurm-local.sh start DIR    start it; prints the line to use it: export SLURM_CONF=DIR/slurm.conf
#   scripts/slurm-local.sh stop DIR     stop the daemons started in DIR (by their pid files)
set -euo pipefail

mode=${1:-} dir=${2:-}
if [ -z "$mode" ] || [ -z "$dir" ]; then
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi

stop() {
    local f pid
    for f in slurmd slurmctld munged; do
        [ -f "$dir/$f.pid" ] || continue
        pid=$(cat "$dir/$f.pid")
        if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill "$pid" 2>/dev/null || true; fi
    done
    # Wait (up to 10 s) until they are gone, so that DIR can be removed.
    for _ in $(seq 1 100); do
        local alive=0
        for f in slurmd slurmctld munged; do
            [ -f "$dir/$f.pid" ] && pid=$(cat "$dir/$f.pid") && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && \
                ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null && alive=1
        done
        [ $alive -eq 0 ] && return 0
        sleep 0.1
    done
}

case "$mode" in
    start)
        for c in munged slurmctld slurmd sbatch; do
            command -v "$c" >/dev/null || [ -x "/usr/sbin/$c" ] || { echo "slurm-local.sh: $c not found (Debian: apt-get install slurm-wlm)" >&2; exit 1; }
        done
        [ "$(id -u)" -eq 0 ] || { echo "slurm-local.sh: starting slurmd needs root" >&2; exit 1; }
        # The daemons must not inherit this script's other open files: a caller that waits for this
        # script to end by the close of a pipe or socket would otherwise wait for the daemons too.
        for fd in /proc/$$/fd/*; do
            fd=${fd##*/}
            if [ "$fd" -gt 2 ] && [ "$fd" -ne 255 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
        done
        export PATH="$PATH:/usr/sbin"
        mkdir -p "$dir"
        dir=$(readlink -f "$dir")
        mkdir -p "$dir/state" "$dir/spool" "$dir/log" "$dir/munge"
        chmod 700 "$dir/munge"
        # munge: a private key and socket.
        head -c 1024 /dev/urandom > "$dir/munge/munge.key"
        chmod 600 "$dir/munge/munge.key"
        munged --force --socket="$dir/munge/socket" --key-file="$dir/munge/munge.key" \
            --pid-file="$dir/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed" \
            </dev/null >>"$dir/log/start.log" 2>&1
        host=$(hostname -s)
        cpus=$(nproc)
        port=$((20000 + RANDOM % 20000))
        cat > "$dir/slurm.conf" <<EOF
ClusterName=twoscale-local
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldPort=$port
SlurmdPort=$((port + 1))
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
EOF
        export SLURM_CONF="$dir/slurm.conf"
        slurmctld -f "$SLURM_CONF" </dev/null >>"$dir/log/start.log" 2>&1
        slurmd -f "$SLURM_CONF" </dev/null >>"$dir/log/start.log" 2>&1
        # Ready when the node is idle (up to 30 s).
        for _ in $(seq 1 150); do
            if sinfo -h -o %t 2>/dev/null | grep -q idle; then
                echo "export SLURM_CONF=$SLURM_CONF"
                exit 0
            fi
            sleep 0.2
        done
        echo "slurm-local.sh: the node did not become idle; see $dir/log" >&2
        stop
        exit 1
        ;;
    stop)
        [ -d "$dir" ] || exit 0
        stop
        ;;
    *)
        echo "slurm-local.sh: unknown mode '$mode' (start or stop)" >&2
        exit 2
        ;;
esac
