#!/usr/bin/env python3
"""Pack a study folder's cells into one file for the record, or restore them.

    scripts/study-cells.py pack DIR OUT.jsonl.gz    # grid.json, method.txt and every cell, byte for byte
    scripts/study-cells.py unpack OUT.jsonl.gz DIR  # the folder back; `twoscale study GRID --dir DIR` then
                                                    # recomputes every table from the cells, running nothing
    scripts/study-cells.py verify OUT.jsonl.gz DIR  # exit 1 if DIR's files differ from the record

Each line is one file: its path under DIR, its SHA-256 and its text. Standard library only.
"""
import gzip
import hashlib
import json
import os
import sys


def files(folder):
    names = ["grid.json", "method.txt"]
    cells = os.path.join(folder, "cells")
    names += sorted(os.path.join("cells", n) for n in os.listdir(cells) if n.endswith(".json"))
    return names


def read(folder, name):
    with open(os.path.join(folder, name), "rb") as f:
        return f.read()


def pack(folder, out):
    tmp = out + ".part"
    with gzip.open(tmp, "wt", encoding="utf-8") as f:
        for name in files(folder):
            data = read(folder, name)
            f.write(json.dumps({"file": name, "sha256": hashlib.sha256(data).hexdigest(),
                                "text": data.decode("utf-8")}, sort_keys=True) + "\n")
    os.replace(tmp, out)


def records(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            data = r["text"].encode("utf-8")
            if hashlib.sha256(data).hexdigest() != r["sha256"]:
                sys.exit(f"{path}: {r['file']} does not match its recorded SHA-256")
            yield r["file"], data


def unpack(path, folder):
    for name, data in records(path):
        target = os.path.join(folder, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target + ".part", "wb") as f:
            f.write(data)
        os.replace(target + ".part", target)


def verify(path, folder):
    recorded = dict(records(path))
    present = set(files(folder))
    bad = sorted(n for n in recorded if n not in present or read(folder, n) != recorded[n])
    extra = sorted(present - set(recorded))
    for n in bad:
        print(f"differs or missing: {n}")
    for n in extra:
        print(f"not in the record: {n}")
    print(f"{len(recorded)} files recorded, {len(bad)} differ, {len(extra)} extra")
    return 1 if bad or extra else 0


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("pack", "unpack", "verify"):
        sys.exit(__doc__)
    cmd, a, b = sys.argv[1:]
    if cmd == "pack":
        pack(a, b)
    elif cmd == "unpack":
        unpack(a, b)
    else:
        sys.exit(verify(a, b))
