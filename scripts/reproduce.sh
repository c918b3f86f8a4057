#!/usr/bin/env bash
# Re-renders every committed report: the notebooks listed in notebooks-txt/DEFAULT, in order, then
# notebooks-txt/brackets.txt, intervals.txt, bracket-coverage.txt, island-noise.txt, outer-moves.txt, independence-moves.txt, exact-cases.txt, exact-target.txt, precision.txt, tempering.txt and tempering-deep.txt (the DEFAULT list about two hours on 2 cores in a release build,
# then brackets.txt about 0.2 hours, intervals.txt 2.0, bracket-coverage.txt 0.7, island-noise.txt 0.1, outer-moves.txt 0.6, independence-moves.txt about 1.3 (its option now sizes the islands of units of 100 coordinates), exact-cases.txt 1.2, exact-target.txt 0.3, precision.txt 0.8, tempering.txt 2.3 and tempering-deep.txt 3.7; each report's header
# records its blocks' wall times). notebooks-txt/cnn.txt (about 2.3 hours more) only with --with-cnn;
# notebooks-txt/study.txt and study-teacher.txt, the measure study (about 6.5 hours on 2 cores: 5.7 for study.txt, 0.7 for study-teacher.txt; resumable), only with --with-study.
#
#   ./scripts/reproduce.sh              # build (release) and render
#   ./scripts/reproduce.sh --dry-run    # list the notebooks it would render, run nothing
#   ./scripts/reproduce.sh --with-cnn   # also the CNN notebook
#   ./scripts/reproduce.sh --with-study # also the measure study (docs/STUDY.md)
set -euo pipefail
cd "$(dirname "$0")/.."
dry=0 cnn=0 study=0
for a in "$@"; do
    case "$a" in
        --dry-run) dry=1 ;;
        --with-cnn) cnn=1 ;;
        --with-study) study=1 ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) echo "reproduce.sh: unknown argument '$a' (--dry-run, --with-cnn, --with-study)" >&2; exit 2 ;;
    esac
done
notebooks=()
while read -r nb; do
    [ -z "$nb" ] || [[ "$nb" == \#* ]] && continue
    notebooks+=("$nb")
done < notebooks-txt/DEFAULT
notebooks+=(brackets.txt intervals.txt bracket-coverage.txt island-noise.txt outer-moves.txt independence-moves.txt exact-cases.txt exact-target.txt precision.txt tempering.txt tempering-deep.txt)
[ "$cnn" = 1 ] && notebooks+=(cnn.txt)
[ "$study" = 1 ] && notebooks+=(study.txt study-teacher.txt)
for nb in "${notebooks[@]}"; do
    [ -f "notebooks-txt/$nb" ] || { echo "reproduce.sh: notebooks-txt/$nb is missing" >&2; exit 1; }
done
if [ "$dry" = 1 ]; then
    for nb in "${notebooks[@]}"; do echo ".build/release/twoscale notebook notebooks-txt/$nb --resume runs/notebooks/${nb%.txt}"; done
    exit 0
fi
source scripts/deps.sh
twoscale_install_deps
[ "$study" = 1 ] && twoscale_install_study_data
swift build -c release
for nb in "${notebooks[@]}"; do
    echo "== notebook $nb" >&2
    # Finished blocks are kept per notebook, so an interrupted render resumes (docs/NOTEBOOKS.md).
    .build/release/twoscale notebook "notebooks-txt/$nb" --resume "runs/notebooks/${nb%.txt}"
done
