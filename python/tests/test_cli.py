"""The client: argv from keyword arguments, errors, and fisher end to end against two weights writers."""

import collections
import io
import json
import os
import sys
import tempfile
import unittest
from unittest import mock

import twoscale
from ._support import binary, requires_binary


class BuildArgv(unittest.TestCase):
    def test_flag_mapping(self):
        argv = twoscale.build_argv("ed", samples=50, noise_samples=3, lower=True, bias=False, store=None,
                                   eps=[1e-3, 0.1], n=(1000, 10000), sigma2=0.1, zeta=2 / 3, box="-1:1",
                                   gamma=-0.5, seed=-3, C=2)
        self.assertEqual(argv, ["ed", "--samples", "50", "--noise-samples", "3", "--lower",
                                "--eps", "0.001,0.1", "--n", "1000,10000", "--sigma2", "0.1",
                                "--zeta", "0.6666666666666666", "--box=-1:1", "--gamma=-0.5", "--seed=-3",
                                "--C", "2"])

    def test_numbers_round_trip(self):
        x = 0.1 + 0.2
        argv = twoscale.build_argv("toy", lambdas=[x, 1e-300, 123456789012345678])
        self.assertEqual(argv[2].split(","), [repr(x), "1e-300", "123456789012345678"])
        self.assertEqual(float(argv[2].split(",")[0]), x)

    def test_positional_arguments_and_paths(self):
        import pathlib
        argv = twoscale.build_argv("analyze", pathlib.Path("runs/s"), eps="1e-4:0.9:50", lower=True)
        self.assertEqual(argv, ["analyze", "runs/s", "--eps", "1e-4:0.9:50", "--lower"])

    def test_unwritable_values_are_refused(self):
        with self.assertRaises(TypeError):
            twoscale.build_argv("ed", eps={"a": 1})
        with self.assertRaises(TypeError):
            twoscale.build_argv("ed", eps=[True, 0.1])

    def test_missing_executable_says_how_to_set_it(self):
        with tempfile.TemporaryDirectory() as empty, \
                mock.patch.dict(os.environ, {"PATH": empty}, clear=True):
            with self.assertRaises(FileNotFoundError) as cm:
                twoscale.fisher(arch="3-2-2")
            self.assertIn("TWOSCALE_BIN", str(cm.exception))
            with self.assertRaises(FileNotFoundError) as cm:
                twoscale.find_binary(os.path.join(empty, "twoscale"))
            self.assertIn("binary=", str(cm.exception))


@requires_binary
class Errors(unittest.TestCase):
    def setUp(self):
        self.bin = binary()

    def test_failing_command_raises_with_status_2_and_the_message(self):
        err = io.StringIO()
        with mock.patch.object(sys, "stderr", err):
            with self.assertRaises(twoscale.TwoscaleError) as cm:
                twoscale.fisher(binary=self.bin, arch="3-2-2", data="synthetic:gaussian", samples=5, sigma2=-1)
        e = cm.exception
        self.assertIsInstance(e, RuntimeError)
        self.assertEqual(e.returncode, 2)
        self.assertTrue(str(e).startswith("twoscale: --sigma2:"), str(e))
        self.assertIn("must be a finite number > 0", str(e))
        self.assertEqual("\n" not in str(e), True)
        self.assertIn("--sigma2=-1", e.cmd)
        self.assertEqual(e.cmd[0], self.bin)
        self.assertEqual(e.cmd[-1], "--json")
        self.assertIn(str(e), e.stderr)
        self.assertIn(str(e), err.getvalue())          # stderr was echoed (not quiet)

    def test_quiet_keeps_stderr_for_the_error_only(self):
        err = io.StringIO()
        with mock.patch.object(sys, "stderr", err):
            with self.assertRaises(twoscale.TwoscaleError) as cm:
                twoscale.run("fisher", binary=self.bin, quiet=True, arch="3-2-2", data="synthetic:gaussian",
                             samples=5, sigma2=0.1, bogus_flag=True)
        self.assertEqual(err.getvalue(), "")
        self.assertEqual(cm.exception.returncode, 2)
        self.assertIn("--bogus-flag", str(cm.exception))

    def test_unreadable_weights_file_is_status_1(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bad.safetensors")
            with open(path, "wb") as f:
                f.write(b"not a safetensors file")
            with self.assertRaises(twoscale.TwoscaleError) as cm:
                twoscale.fisher(binary=self.bin, quiet=True, arch="3-2-2", bias=True, weights=path,
                                data="synthetic:gaussian", samples=5, sigma2=0.1)
        self.assertEqual(cm.exception.returncode, 1)
        self.assertIn("bad.safetensors", str(cm.exception))


# A 3-2-2 network with biases; numbers that are not exact in binary, so a lossy writer would show.
W1 = [[0.1, -0.7, 1 / 3], [0.25, 0.9, -0.2]]
B1 = [0.05, -0.3]
W2 = [[0.8, -0.45], [-0.6, 0.3]]
B2 = [0.2, -0.1]


@requires_binary
class FisherEndToEnd(unittest.TestCase):
    """The .safetensors file from save_weights against the same numbers in twoscale's JSON form."""

    def setUp(self):
        self.bin = binary()
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        self.json_path = os.path.join(self.dir.name, "w.json")
        with open(self.json_path, "w") as f:
            json.dump({"weights": [W1, W2], "biases": [B1, B2]}, f)

    def fisher(self, weights, **extra):
        flags = dict(arch="3-2-2", bias=True, weights=weights, data="synthetic:gaussian", samples=20,
                     sigma2=0.1, seed=1)
        flags.update(extra)
        return twoscale.fisher(binary=self.bin, quiet=True, **flags)

    def assertSameSpectrum(self, a, b):
        self.assertEqual(a["trace"], b["trace"])
        self.assertEqual([blk["eigenvalues"] for blk in a["blocks"]], [blk["eigenvalues"] for blk in b["blocks"]])
        self.assertEqual([blk["trace"] for blk in a["blocks"]], [blk["trace"] for blk in b["blocks"]])

    def test_safetensors_from_nested_lists_matches_json_weights(self):
        path = os.path.join(self.dir.name, "w.safetensors")
        twoscale.save_weights({"arr_0": W1, "arr_1": B1, "arr_2": W2, "arr_3": B2}, path)
        for kind in ("markov", "output"):
            ref = self.fisher(self.json_path, fisher=kind)
            got = self.fisher(path, fisher=kind)
            self.assertEqual(ref["dimension"], 14)
            self.assertEqual(len(ref["blocks"]), 2 if kind == "markov" else 1)
            self.assertGreater(ref["trace"], 0)
            self.assertSameSpectrum(got, ref)

    def test_pytorch_state_dict_names(self):
        path = os.path.join(self.dir.name, "sd.safetensors")
        sd = collections.OrderedDict([("0.weight", W1), ("0.bias", B1), ("2.weight", W2), ("2.bias", B2)])
        twoscale.save_weights(sd, path)
        self.assertSameSpectrum(self.fisher(path), self.fisher(self.json_path))

    def test_the_weights_are_really_used(self):
        path = os.path.join(self.dir.name, "other.safetensors")
        other = [row[:] for row in W1]
        other[1][2] += 0.5
        twoscale.save_weights(collections.OrderedDict(
            [("0.weight", other), ("0.bias", B1), ("2.weight", W2), ("2.bias", B2)]), path)
        self.assertNotEqual(self.fisher(path)["trace"], self.fisher(self.json_path)["trace"])

    def test_wrong_shape_is_a_usage_error_naming_the_tensor(self):
        path = os.path.join(self.dir.name, "t.safetensors")
        sd = collections.OrderedDict([("0.weight", W1), ("0.bias", B1),
                                      ("2.weight", [list(c) for c in zip(*W2)] + [[1.0, 2.0]]), ("2.bias", B2)])
        twoscale.save_weights(sd, path)
        with self.assertRaises(twoscale.TwoscaleError) as cm:
            self.fisher(path)
        self.assertEqual(cm.exception.returncode, 2)
        self.assertIn("2.weight", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
