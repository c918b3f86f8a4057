#!/usr/bin/env bash
# The whole test suite: installs missing system packages, then `swift test`, optimised. The suite is numerical
# (Monte Carlo coverage over many seeds), about five times faster optimised than in a debug build; it builds in
# a folder of its own (.build-tests) so that the release product of scripts/setup.sh stays as it is.
# -enable-testing keeps @testable imports working; TWOSCALE_TEST_SEAMS turns on the fault-injection seams that
# debug builds have (and release builds do not). Extra arguments go to `swift test` (e.g. --filter NAME).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
twoscale_install_deps
flags=(-c release --build-path .build-tests -Xswiftc -enable-testing -Xswiftc -DTWOSCALE_TEST_SEAMS)
# build everything first: the fault, MPI and SLURM tests run the real twoscale executable (MPI ones under mpirun)
swift build "${flags[@]}" --build-tests
swift test "${flags[@]}" --skip-build "$@"
# the Python client (python/; standard library only) against the binary built above
if command -v python3 >/dev/null 2>&1; then
    TWOSCALE_BIN=.build-tests/release/twoscale python3 -m unittest discover -s python/tests -t python -v
else
    echo "test.sh: python3 not found: skipping the Python client tests (python/tests)" >&2
fi
