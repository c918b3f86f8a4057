#!/usr/bin/env bash
# The whole test suite: installs missing system packages, then `swift test` (debug build).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
twoscale_install_deps
# build everything first: the fault, MPI and SLURM tests run the real twoscale executable (MPI ones under mpirun)
swift build
swift test "$@"
