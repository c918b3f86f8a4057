#!/usr/bin/env bash
# One command on a fresh Debian machine: install what is missing, build in release mode, run the quick main
# job: notebooks-txt/quick.txt rendered into Reports/quick.md (a toy covering check, a network 2sED with its
# interval and certified bracket, a bound curve; a few minutes on 2 cores). Every report: scripts/reproduce.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
twoscale_install_deps
twoscale_install_study_data
swift build -c release
bin=.build/release/twoscale
echo "== notebook quick.txt" >&2
time $bin notebook notebooks-txt/quick.txt
