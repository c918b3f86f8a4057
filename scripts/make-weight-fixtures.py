#!/usr/bin/env python3
"""Writes the weights-file fixtures of Tests/NetworkTests/Fixtures/weights, read by WeightsFormatTests
(Networks) and the CLI's WeightsFileCommandTests:

    pip install numpy safetensors       # numpy 2.x, safetensors 0.4 or later
    python3 scripts/make-weight-fixtures.py [OUT_DIR]     # default: Tests/NetworkTests/Fixtures/weights

One small network, architecture 3-4-2, with and without biases: W_1 (4×3), b_1 (4), W_2 (2×4), b_2 (2),
drawn once from a seeded generator. `expected.json` holds these float64 values (a twoscale JSON weights
file for `--arch 3-4-2 --bias`; `expected-nobias.json` the same without biases); every other file holds
the same values, as float64 or rounded to float32, written by NumPy's own `np.savez` /
`np.savez_compressed` and by the `safetensors` package (`safetensors.numpy.save_file`, which writes the same
bytes as `safetensors.torch.save_file` does for torch tensors of the same names, dtypes and shapes).
The files are tiny and committed; rerunning the script rewrites them byte for byte (NumPy stamps every
zip member 1980-01-01), given the same NumPy and safetensors versions.
"""
import json
import os
import sys
import zipfile

import numpy as np
from safetensors.numpy import save_file

out = sys.argv[1] if len(sys.argv) > 1 else "Tests/NetworkTests/Fixtures/weights"
os.makedirs(out, exist_ok=True)

rng = np.random.default_rng(20241)
W1 = rng.uniform(-1, 1, size=(4, 3))   # (out, in): PyTorch's nn.Linear layout, twoscale's W_m
b1 = rng.uniform(-1, 1, size=4)
W2 = rng.uniform(-1, 1, size=(2, 4))
b2 = rng.uniform(-1, 1, size=2)


def path(name):
    return os.path.join(out, name)


def f32(*arrays):
    return [a.astype(np.float32) for a in arrays]


# The values, as JSON weights files (repr of a float64 round-trips exactly).
with open(path("expected.json"), "w") as f:
    json.dump({"weights": [W1.tolist(), W2.tolist()], "biases": [b1.tolist(), b2.tolist()]}, f, indent=1)
    f.write("\n")
with open(path("expected-nobias.json"), "w") as f:
    json.dump({"weights": [W1.tolist(), W2.tolist()]}, f, indent=1)
    f.write("\n")

# NumPy, positional (arr_0, arr_1, …): L arrays = weights only, 2L = W_1, b_1, W_2, b_2.
np.savez(path("positional-f64.npz"), W1, W2)
np.savez(path("positional-bias-f32.npz"), *f32(W1, b1, W2, b2))
np.savez_compressed(path("positional-compressed-f32.npz"), *f32(W1, W2))
np.savez_compressed(path("positional-compressed-bias-f64.npz"), W1, b1, W2, b2)
# Fortran-ordered (a transposed view, as `np.savez(f, *[k.T for k in kernels])` writes) and big-endian.
np.savez(path("fortran-bigendian.npz"), np.asfortranarray(W1), W2.astype(">f4"))

# ZIP64 forms in the central directory and a ZIP64 end record, as archives past 4 GiB have them:
# written small by lowering zipfile's limits for one np.savez.
limits = zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT
zipfile.ZIP64_LIMIT = zipfile.ZIP_FILECOUNT_LIMIT = 0
try:
    np.savez(path("zip64-f64.npz"), W1, W2)
finally:
    zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = limits

# NumPy, named as a PyTorch nn.Sequential state dict: Linear, ReLU, Linear → 0.*, 2.*.
seq = {"0.weight": W1, "0.bias": b1, "2.weight": W2, "2.bias": b2}
np.savez(path("sequential-bias-f64.npz"), **seq)
np.savez_compressed(path("sequential-compressed-f32.npz"), **{"0.weight": W1.astype(np.float32),
                                                              "2.weight": W2.astype(np.float32)})

# safetensors, as `safetensors.torch.save_file(model.state_dict(), f)` writes them.
save_file({k: v.astype(np.float32) for k, v in seq.items()}, path("sequential-bias-f32.safetensors"))
save_file({"layers.0.weight": W1, "layers.1.weight": W2}, path("layers-f64.safetensors"),
          metadata={"format": "pt"})

# Refused: float16 (safetensors) and int64 (npz) tensors.
save_file({"0.weight": W1.astype(np.float16), "2.weight": W2.astype(np.float16)}, path("f16.safetensors"))
np.savez(path("int64.npz"), np.arange(12).reshape(4, 3), np.arange(8).reshape(2, 4))

print("wrote", len(os.listdir(out)), "files to", out)
