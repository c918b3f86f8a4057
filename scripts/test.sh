#!/usr/bin/env bash
# The whole test suite: installs missing system packages, then `swift test` (debug build).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
twoscale_install_deps
# build everything first: the fault tests run the real twoscale executable
swift build
swift test "$@"
