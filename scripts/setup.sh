#!/usr/bin/env bash
# One command on a fresh Debian machine: install what is missing, build in release mode, run the main job
# (render the default notebooks in notebooks-txt/ into Reports/).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
twoscale_install_deps
swift build -c release
bin=.build/release/twoscale
if $bin help notebook >/dev/null 2>&1 && [ -f notebooks-txt/DEFAULT ]; then
    while read -r nb; do
        [ -z "$nb" ] || [[ "$nb" == \#* ]] && continue
        echo "== notebook $nb" >&2
        $bin notebook "notebooks-txt/$nb"
    done < notebooks-txt/DEFAULT
else
    $bin toy --family constant --lambdas 4,0.01 --eps 0.1 --zeta 0
    $bin toy --family bernoulli --dim 3 --box 0.1:0.9 --eps 1e-3:0.5:10
fi
