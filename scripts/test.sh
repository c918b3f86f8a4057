#!/usr/bin/env bash
# The whole test suite: installs missing system packages, then `swift test` (debug build).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
twoscale_install_deps
swift test "$@"
