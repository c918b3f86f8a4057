"""save_weights: exact bytes, conversions and refusals (no executable needed)."""

import array
import collections
import math
import os
import struct
import tempfile
import unittest

import twoscale


class FakeArray:
    """What a torch tensor's .numpy() gives, reduced to shape and tolist()."""

    def __init__(self, rows):
        self.rows = rows
        self.shape = (len(rows), len(rows[0]))

    def tolist(self):
        return [list(r) for r in self.rows]


class FakeTensor:
    """A torch.Tensor stand-in: only detach().cpu().numpy() leads to the data."""

    def __init__(self, rows):
        self.rows = rows
        self.calls = []

    def detach(self):
        self.calls.append("detach")
        return self

    def cpu(self):
        self.calls.append("cpu")
        return self

    def numpy(self):
        self.calls.append("numpy")
        return FakeArray(self.rows)


class SaveWeightsBytes(unittest.TestCase):
    def test_bytes_of_a_tiny_mapping_assembled_by_hand(self):
        header = (b'{"w":{"dtype":"F64","shape":[1,2],"data_offsets":[0,16]},'
                  b'"b1":{"dtype":"F64","shape":[1],"data_offsets":[16,24]}}')
        self.assertEqual(len(header), 113)          # 57 + 56 characters: 7 spaces pad it to 120
        padded = header + b"       "
        expected = (struct.pack("<Q", 120) + padded
                    + struct.pack("<d", 1.0) + struct.pack("<d", -2.5) + struct.pack("<d", 0.1))
        # the same by hand, byte for byte: 120 = 0x78, and 1.0 = 0x3FF0000000000000 little-endian
        self.assertEqual(expected[:8], b"\x78\x00\x00\x00\x00\x00\x00\x00")
        self.assertEqual(expected[128:136], b"\x00\x00\x00\x00\x00\x00\xf0\x3f")
        mapping = collections.OrderedDict([("w", [[1, -2.5]]), ("b1", (0.1,))])
        self.assertEqual(twoscale.safetensors_bytes(mapping), expected)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.safetensors")
            self.assertEqual(twoscale.save_weights(mapping, path), path)
            with open(path, "rb") as f:
                self.assertEqual(f.read(), expected)
            self.assertEqual(os.listdir(d), ["m.safetensors"])   # no temporary file left

    def test_order_of_the_mapping_is_kept(self):
        blob = twoscale.safetensors_bytes({"z": [1.0], "a": [2.0]})
        n = struct.unpack("<Q", blob[:8])[0]
        text = blob[8:8 + n].decode()
        self.assertLess(text.index('"z"'), text.index('"a"'))
        self.assertEqual(n % 8, 0)
        self.assertEqual(struct.unpack("<2d", blob[8 + n:]), (1.0, 2.0))

    def test_overwrites_atomically_and_accepts_pathlike(self):
        import pathlib
        with tempfile.TemporaryDirectory() as d:
            path = pathlib.Path(d) / "m.safetensors"
            twoscale.save_weights({"a": [1.0]}, path)
            twoscale.save_weights({"a": [1.0, 2.0]}, path)
            self.assertEqual(os.listdir(d), ["m.safetensors"])
            self.assertEqual(path.read_bytes(), twoscale.safetensors_bytes({"a": [1.0, 2.0]}))


class SaveWeightsConversions(unittest.TestCase):
    def values(self, mapping):
        blob = twoscale.safetensors_bytes(mapping)
        n = struct.unpack("<Q", blob[:8])[0]
        import json
        header = json.loads(blob[8:8 + n])
        data = blob[8 + n:]
        return header, list(struct.unpack("<%dd" % (len(data) // 8), data))

    def test_fake_torch_tensor_goes_through_detach_cpu_numpy(self):
        t = FakeTensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        header, values = self.values({"0.weight": t})
        self.assertEqual(t.calls, ["detach", "cpu", "numpy"])
        self.assertEqual(header["0.weight"]["shape"], [2, 3])
        self.assertEqual(values, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])

    def test_array_array_tuples_and_ints(self):
        header, values = self.values({"a": array.array("f", [0.5, 1.5]), "b": ((1, 2), (3, 4)), "c": 7})
        self.assertEqual([header[k]["shape"] for k in "abc"], [[2], [2, 2], []])
        self.assertEqual([header[k]["dtype"] for k in "abc"], ["F64"] * 3)
        self.assertEqual(values, [0.5, 1.5, 1.0, 2.0, 3.0, 4.0, 7.0])

    def test_state_dict_like_ordered_dict(self):
        sd = collections.OrderedDict([("0.weight", FakeTensor([[1.0, 2.0]])), ("0.bias", FakeTensor([[3.0]]))])
        header, values = self.values(sd)
        self.assertEqual(list(header), ["0.weight", "0.bias"])
        self.assertEqual(values, [1.0, 2.0, 3.0])


class SaveWeightsRefusals(unittest.TestCase):
    def refuse(self, mapping, *words):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.safetensors")
            with self.assertRaises(ValueError) as cm:
                twoscale.save_weights(mapping, path)
            self.assertEqual(os.listdir(d), [])      # nothing written
        for w in words:
            self.assertIn(w, str(cm.exception))

    def test_ragged(self):
        self.refuse({"ok": [1.0], "2.weight": [[1.0, 2.0], [3.0]]}, "'2.weight'", "ragged")
        self.refuse({"x": [1.0, [2.0]]}, "'x'", "ragged")
        self.refuse({"x": [[1.0], 2.0]}, "'x'", "ragged")

    def test_nan_and_inf(self):
        self.refuse({"0.bias": [1.0, math.nan]}, "'0.bias'", "nan")
        self.refuse({"w": [[math.inf]]}, "'w'", "inf")

    def test_non_numbers(self):
        self.refuse({"w": [1.0, "2"]}, "'w'", "not a number")
        self.refuse({"w": [True]}, "'w'", "not a number")
        self.refuse({"w": None}, "'w'", "not a number")

    def test_empty_mapping(self):
        self.refuse({}, "empty")
        self.refuse(collections.OrderedDict(), "empty")


if __name__ == "__main__":
    unittest.main()
