"""README.md's "## Your own model" section, run verbatim: its python block (with the stand-in torch of
tests/stubs) and then its sh block (bash, set -e, `twoscale` resolving to $TWOSCALE_BIN).

The README is $TWOSCALE_README if set, else the repository's README.md.
"""

import csv
import os
import re
import shlex
import subprocess
import sys
import tempfile
import unittest

from ._support import PYTHON_DIR, REPO, STUBS, binary, requires_binary

HEADING = "## Your own model"


def readme_path():
    return os.environ.get("TWOSCALE_README") or os.path.join(REPO, "README.md")


def section(text):
    """The text between the heading line `## Your own model` and the next `## ` heading."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.rstrip() == HEADING]
    if len(starts) != 1:
        raise AssertionError("%s has %d '%s' headings (expected one)" % (readme_path(), len(starts), HEADING))
    body = []
    in_fence = False
    for line in lines[starts[0] + 1:]:
        if line.startswith("```"):
            in_fence = not in_fence
        if not in_fence and line.startswith("## "):
            break
        body.append(line)
    return "\n".join(body) + "\n"


def blocks(text, lang):
    return re.findall(r"^```" + lang + r"[ \t]*\n(.*?)^```[ \t]*$", text, flags=re.S | re.M)


def logical_lines(script):
    """The sh block's commands: continuation lines joined, blank and comment lines dropped."""
    out, current = [], ""
    for line in script.splitlines():
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        current += line
        if current.strip() and not current.lstrip().startswith("#"):
            out.append(current)
        current = ""
    return out


@requires_binary
class ReadmeOwnModel(unittest.TestCase):
    def setUp(self):
        with open(readme_path(), encoding="utf-8") as f:
            self.section = section(f.read())
        self.python = blocks(self.section, "python")
        self.sh = blocks(self.section, "sh")
        self.assertTrue(self.python, "no ```python block in the section")
        self.assertTrue(self.sh, "no ```sh block in the section")
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        self.work = os.path.join(self.dir.name, "work")
        bindir = os.path.join(self.dir.name, "bin")
        os.mkdir(self.work)
        os.mkdir(bindir)
        os.symlink(binary(), os.path.join(bindir, "twoscale"))
        self.env = dict(os.environ)
        self.env["PATH"] = bindir + os.pathsep + self.env.get("PATH", "")
        self.env["PYTHONPATH"] = os.pathsep.join([STUBS, PYTHON_DIR])

    def run_python_block(self):
        script = os.path.join(self.dir.name, "own_model.py")
        with open(script, "w", encoding="utf-8") as f:
            f.write("\n".join(self.python))
        p = subprocess.run([sys.executable, script], cwd=self.work, env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(p.returncode, 0, "python block failed:\n" + p.stderr)

    def test_section_runs(self):
        self.assertLess(len(self.section), 2600, "the section should stay short")
        self.run_python_block()
        with open(os.path.join(self.work, "X.csv"), newline="") as f:
            rows = list(csv.reader(f))
        self.assertEqual(len(rows), 200)
        self.assertEqual({len(r) for r in rows}, {8})
        self.assertTrue(os.path.isfile(os.path.join(self.work, "model.safetensors")))

        commands = [c for block in self.sh for c in logical_lines(block)]
        self.assertTrue(all(re.match(r"\s*twoscale\s", c) for c in commands), commands)
        # the block verbatim under set -e, with a marker echoed before each command to split the output
        body, n, pending = "set -e\n", 0, ""
        for block in self.sh:
            for line in block.splitlines():
                stripped = line.strip()
                if not pending and stripped and not stripped.startswith("#"):
                    body += "echo %s\n" % shlex.quote("@@@ command %d" % n)
                    n += 1
                body += line + "\n"
                pending = line if line.rstrip().endswith("\\") else ""
        self.assertEqual(n, len(commands))
        p = subprocess.run(["bash", "-c", body], cwd=self.work, env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(p.returncode, 0, "sh block failed:\n%s\n%s" % (p.stdout[-3000:], p.stderr[-3000:]))
        outputs = re.split(r"^@@@ command \d+\n", p.stdout, flags=re.M)[1:]
        self.assertEqual(len(outputs), len(commands), p.stdout)

        seen = set()
        for command, out in zip(commands, outputs):
            sub = re.match(r"\s*twoscale\s+(\S+)", command).group(1)
            seen.add(sub)
            if sub == "fisher":
                self.assertRegex(out, r"(?m)^trace\b.*=\s*[0-9]", command)
            elif sub == "ed":
                self.assertRegex(out, r"2sED of 8-4-3", command)
                self.assertRegex(out, r"(?m)^\s*0\.1\s+[0-9]+\.[0-9]+", command)
                if "--lower" in command:
                    self.assertIn("lower", out, command)
                if "--store" in command:
                    store = shlex.split(command)[shlex.split(command).index("--store") + 1]
                    self.assertTrue(os.path.isfile(os.path.join(self.work, store, "meta.json")), command)
            elif sub == "bound":
                self.assertIn("log_tail", out, command)
                self.assertRegex(out, r"(?m)^\s*1000000\s+[0-9.]+\s+", command)
        self.assertEqual(seen, {"fisher", "ed", "bound"})


if __name__ == "__main__":
    unittest.main()
