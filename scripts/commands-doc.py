#!/usr/bin/env python3
"""Writes the JSON key lists of docs/COMMANDS.md from the binary itself, so the reference cannot drift
from the code.

    python3 scripts/commands-doc.py [.build/release/twoscale]   # default: .build/debug/twoscale

For each command this runs a tiny, fast command line (the LINES below) with `--json` in a scratch folder
($D), collects the key paths of its output (`points[].d_zeta`: `[]` marks the elements of an array,
`.` a nested object) and writes them between the markers `<!-- keys: NAME -->` and `<!-- end keys -->`
of docs/COMMANDS.md, with the command lines that produced them. The prose around the markers is kept.
CLITests/CommandReferenceTests reads those command lines back from docs/COMMANDS.md, runs them in
process and fails when their keys differ from the ones listed: re-run this script after changing a
command's output.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/debug/twoscale")
DOC = os.path.join("docs", "COMMANDS.md")
NOTEBOOK = "scripts/commands-doc-notebook.txt"

# name → (setup command lines, the documented command line). `$D` is a scratch folder; every line gets
# `--json` where it is documented. Keep each line under about 2 s in a debug build.
NET = "--arch 4-3-3 --data synthetic:gaussian --samples 20 --sigma2 0.1 --seed 1"
LINES = [
    ("toy", [], "toy --family bernoulli --dim 2 --box 0.1:0.9 --eps 0.01,0.1 --zeta 0.6667"),
    ("toy --mc", [], "toy --family bernoulli --dim 4 --box 0.1:0.9 --eps 0.01,0.1 --mc --paths 16 --trials 2 --seed 1"),
    ("toy --family layered", [], "toy --family layered --units 2,2 --unit-size 3,3 --coupling 3 --eps 0.01,0.1 --mc --paths 16 --inner 8 --trials 2 --joint --outer-moves 2 --chains 2 --seed 1"),
    ("fisher", [], "fisher %s" % NET),
    ("ed", [], "ed %s --eps 0.01,0.1 --lower --paths 8 --inner 8 --outer-moves 2" % NET),
    ("ed --tilt-moves", [], "ed %s --eps 0.01,0.1 --lower --paths 8 --inner 8 --tilt-moves 4 --chains 2" % NET),
    ("ed --estimator plain", [], "ed --estimator plain %s --eps 0.01,0.1 --lower --paths 8 --inner 4 --store $D/s" % NET),
    ("ed --estimator tempering", [], "ed --estimator tempering %s --eps 0.01,0.1 --paths 8 --inner 2" % NET),
    ("analyze", ["ed --estimator plain %s --eps 0.1 --paths 8 --inner 4 --store $D/s" % NET],
     "analyze $D/s --eps 0.01,0.1 --lower"),
    ("merge", ["ed --estimator plain %s --eps 0.1 --paths 8 --inner 4 --store $D/a --shard 1/2" % NET,
               "ed --estimator plain %s --eps 0.1 --paths 8 --inner 4 --store $D/b --shard 2/2" % NET],
     "merge $D/a $D/b --out $D/ab"),
    ("bound", [], "bound --n 1000,10000 --gamma 1 --zeta 0.6667 --family constant --lambdas 4,0.01 --delta 0.05"),
    ("bound --store", ["ed --estimator plain %s --eps 0.1 --paths 8 --inner 4 --store $D/s" % NET],
     "bound --n 1000,10000 --gamma 1 --zeta 0.6667 --store $D/s --estimator nested --delta 0.05"),
    ("train", [], "train --arch 4-3-3 --data synthetic:teacher:4-3-3 --samples 64 --epochs 2 --batch 16 --seed 1"),
    ("gap", [], "gap --teacher 4-3-3 --student 4-5-3 --n 50,100 --trials 1 --epochs 2 --seed 1"),
    ("gap --adversarial", [], "gap --teacher 4-3-3 --student 4-5-3 --n 50,100 --trials 1 --epochs 2 --seed 1 --loss probability --project --adversarial 2 --adversarial-iterations 5 --d-zeta rank-limit --rank-samples 20 --delta 0.05"),
    ("compare", [], "compare --archs 4-3-3,4-2-3 --data synthetic:teacher:4-3-3 --samples 64 --fisher-samples 20 --seeds 1 --epochs 2 --paths 8 --inner 4"),
    ("study", [], "study study/tiny-grid.json --dir $D/study --bootstrap 200"),
    ("notebook", [], "notebook %s --out-dir $D/Reports" % NOTEBOOK),
    ("bench", [], "bench toy"),
    ("bench-train", [], "bench-train --arch 4-3-3 --samples 256 --epochs 1 --repeats 1"),
]


def key_paths(value, prefix=""):
    """Every key path of a JSON value: objects give `prefix.key`, array elements `prefix[]`."""
    out = set()
    if isinstance(value, dict):
        for k, v in value.items():
            p = prefix + "." + k if prefix else k
            out.add(p)
            out |= key_paths(v, p)
    elif isinstance(value, list):
        for v in value:
            out |= key_paths(v, prefix + "[]")
    return out


def run(line, scratch):
    args = [a.replace("$D", scratch) for a in line.split()] + ["--json"]
    r = subprocess.run([binary] + args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("commands-doc.py: `twoscale %s` failed (%d): %s" % (line, r.returncode, r.stderr.strip()))
    return json.loads(r.stdout)


def block(name, setup, line, keys):
    out = ["<!-- keys: %s -->" % name]
    for s in setup:
        out.append("After `twoscale %s --json`:" % s)
    out.append("`twoscale %s --json` writes these keys (generated; other flags may add or drop some):" % line)
    out.append("")
    # one bullet for the top-level keys without children, then one per key that has children
    children = {}
    for k in keys:
        top = re.split(r"[.\[]", k)[0]
        children.setdefault(top, []).append(k)
    plain = sorted(t for t, ks in children.items() if len(ks) == 1)
    if plain:
        out.append("* " + ", ".join("`%s`" % k for k in plain))
    for top in sorted(t for t, ks in children.items() if len(ks) > 1):
        out.append("* " + ", ".join("`%s`" % k for k in sorted(children[top])))
    out.append("<!-- end keys -->")
    return "\n".join(out)


doc = open(DOC, encoding="utf-8").read()
for name, setup, line in LINES:
    scratch = tempfile.mkdtemp(prefix="twoscale-commands-doc-")
    try:
        for s in setup:
            run(s, scratch)
        keys = key_paths(run(line, scratch))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    pattern = re.compile(r"<!-- keys: %s -->.*?<!-- end keys -->" % re.escape(name), re.S)
    if not pattern.search(doc):
        sys.exit("commands-doc.py: %s has no '<!-- keys: %s -->' … '<!-- end keys -->' block" % (DOC, name))
    doc = pattern.sub(lambda m: block(name, setup, line, keys), doc)
    print("%-22s %3d keys" % (name, len(keys)))

fd, tmp = tempfile.mkstemp(dir="docs", prefix=".COMMANDS-")
with os.fdopen(fd, "w", encoding="utf-8") as f:
    f.write(doc)
os.replace(tmp, DOC)
print("wrote", DOC)
