#!/usr/bin/env bash
# Record every command's JSON on fixed command lines (timings stripped), for refactors that must leave
# outputs identical: `scripts/golden.sh DIR` writes DIR/NN.json; `scripts/golden.sh DIR REF` also
# compares with an earlier record REF and exits 1 on any difference (key order included). Uses the release binary.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/golden.sh DIR [REF]}
ref=${2:-}
bin=${TWOSCALE_BIN:-.build/release/twoscale}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lines=(
  "toy --family constant --lambdas 4,0.01 --eps 0.1 --zeta 0 --json"
  "toy --family bernoulli --dim 3 --box 0.1:0.9 --eps 1e-3:0.5:10 --json"
  "toy --family bernoulli --dim 1000 --box 0.1:0.9 --eps 1e-3,0.1 --mc --paths 64 --seed 3 --json"
  "ed --arch 54-16-7 --samples 25 --eps 1e-3,0.1 --zeta 0.6667 --lower --seed 1 --json"
  "ed --arch 8-4-3-3 --samples 10 --eps 1e-3,0.1 --lower --seed 2 --paths 16 --inner 8 --json"
  "ed --estimator plain --arch 8-4-3 --samples 10 --paths 20 --inner 10 --eps 1e-3:0.5:5 --lower --seed 1 --store $tmp/s1 --json"
  "analyze $tmp/s1 --eps 1e-2,0.1 --lower --json"
  "ed --arch 8x8x1-conv2k3-maxpool2-3 --samples 10 --eps 1e-3,0.1 --lower --seed 1 --paths 8 --inner 8 --json"
  "fisher --arch 8-4-3 --data synthetic:gaussian --samples 10 --sigma2 0.1 --seed 1 --json"
  "bound --store $tmp/s1 --n 100,1000,10000 --json"
  "bound --family bernoulli --dim 100 --box 0.1:0.9 --n 100,1000 --json"
  "compare --archs 8-4-3,8-3-3 --data synthetic:teacher:8-4-3 --samples 60 --fisher-samples 30 --paths 8 --inner 8 --seeds 2 --epochs 2 --batch 20 --json"
  "compare --archs 8-4-3,8-3-3 --data synthetic:teacher:8-4-3 --samples 60 --fisher-samples 30 --estimator plain --paths 8 --inner 8 --seeds 2 --epochs 2 --batch 20 --json"
  "train --arch 8-4-3 --data synthetic:teacher:8-4-3 --samples 50 --epochs 2 --batch 25 --seed 1 --json"
  "ed --arch 8-4-3 --fisher output --samples 10 --paths 10 --eps 1e-3,0.1 --seed 1 --json"
  "gap --teacher 8-4-3 --student 8-4-3 --n 50,100 --trials 2 --epochs 2 --json"
  "ed --estimator tempering --arch 8-4-3-3 --samples 10 --eps 1e-3,0.1 --seed 2 --paths 16 --inner 8 --json"
  "toy --family layered --units 4,4,3 --unit-size 50,50,50 --eps 1e-3,0.1 --mc --paths 16 --inner 8 --seed 2 --json"
  "toy --family layered --units 4,4 --unit-size 40,40 --eps 1e-3,0.1 --mc --joint --outer-moves 2 --paths 16 --inner 8 --seed 3 --json"
  "toy --family bernoulli --dim 20 --box 0.1:0.9 --eps 1e-3,0.1 --mc --estimator plain --paths 64 --seed 3 --json"
)
status=0
for i in "${!lines[@]}"; do
  n=$(printf "%02d" "$i")
  # shellcheck disable=SC2086
  if ! $bin ${lines[$i]} > "$tmp/raw.json" 2> "$tmp/err.txt"; then
    echo "FAILED ($n): twoscale ${lines[$i]}" >&2; tail -3 "$tmp/err.txt" >&2; echo '{"failed": true}' > "$tmp/raw.json"
  fi
  python3 - "$tmp/raw.json" "$out/$n.json" "${lines[$i]//$tmp/TMP}" <<'PY'
import json, sys
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if not any(s in k for s in ("second", "elapsed", "wall", "timing"))}
    if isinstance(v, list):
        return [strip(x) for x in v]
    if isinstance(v, str) and "/tmp/" in v:
        return "TMP"
    return v
raw = open(sys.argv[1]).read()
try:
    doc = strip(json.loads(raw))
except Exception:
    doc = {"unparsed": raw[:2000]}
json.dump({"command": sys.argv[3], "output": doc}, open(sys.argv[2], "w"), indent=1)
PY
  if [ -n "$ref" ]; then
    if ! cmp -s "$out/$n.json" "$ref/$n.json"; then echo "DIFFERS ($n): twoscale ${lines[$i]}" >&2; status=1; fi
  fi
  echo "done $n" >&2
done
exit $status
