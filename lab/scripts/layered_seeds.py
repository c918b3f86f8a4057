"""The resumable seed loop that lab/scripts/multi-stage-rule.py and lower-one-stage.py share: one
`toy --family layered --mc --trials 1` per seed, rows appended to a CSV as each seed finishes, seeds already
in it skipped; LANE=i/n runs every n-th seed from the i-th; TWOSCALE_BIN names the binary."""
import csv, json, os, subprocess, sys


def run(cols, rows_of):
    """Runs the seeds of `sys.argv` (OUT.csv SEEDS OFFSET UNITS SIZES [further toy flags…]); `rows_of(seed, d)`
    gives the CSV rows of one seed's toy JSON `d`."""
    out, seeds, offset, units, sizes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    extra = sys.argv[6:]
    binary = os.environ.get("TWOSCALE_BIN", ".build/release/twoscale")
    lane, lanes = (int(x) for x in os.environ.get("LANE", "0/1").split("/"))
    done = set()
    if os.path.exists(out):
        with open(out) as f: done = {int(r["seed"]) for r in csv.DictReader(f)}
    with open(out, "a", newline="") as f:
        w = csv.writer(f)
        if not done: w.writerow(cols)
        for s in range(offset + 1, offset + seeds + 1):
            if s in done or (s - offset - 1) % lanes != lane: continue
            r = subprocess.run([binary, "toy", "--family", "layered", "--units", units, "--unit-size", sizes, "--eps", "0.001,0.1",
                                "--mc", "--trials", "1", "--seed", str(s), "--json", "--quiet"] + extra,
                               capture_output=True, text=True, check=True)
            w.writerows(rows_of(s, json.loads(r.stdout)))
            f.flush()
