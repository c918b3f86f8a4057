#!/usr/bin/env bash
# The whole test suite: installs missing system packages, then `swift test` (debug build).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
twoscale_install_deps
# build everything first: the fault, MPI and SLURM tests run the real twoscale executable (MPI ones under mpirun)
swift build
swift test "$@"
# the Python client (python/; standard library only) against the debug binary built above
if command -v python3 >/dev/null 2>&1; then
    TWOSCALE_BIN=.build/debug/twoscale python3 -m unittest discover -s python/tests -t python -v
else
    echo "test.sh: python3 not found: skipping the Python client tests (python/tests)" >&2
fi
