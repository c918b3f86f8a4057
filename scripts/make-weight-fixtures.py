#!/usr/bin/env python3
"""Writes the weights-file fixtures of Tests/NetworksTests/Fixtures/weights, read by WeightsFormatTests
(Networks) and the CLI's WeightsFileCommandTests:

    pip install numpy safetensors       # numpy 2.x, safetensors 0.4 or later
    python3 scripts/make-weight-fixtures.py [OUT_DIR]     # default: Tests/NetworksTests/Fixtures/weights

One small network, architecture 3-4-2, with and without biases: W_1 (4×3), b_1 (4), W_2 (2×4), b_2 (2),
drawn once from a seeded generator. `expected.json` holds these float64 values (a twoscale JSON weights
file for `--arch 3-4-2 --bias`; `expected-nobias.json` the same without biases); every other file holds
the same values, as float64 or rounded to float32, written by NumPy's own `np.savez` /
`np.savez_compressed` and by the `safetensors` package (`safetensors.numpy.save_file`, which writes the same
bytes as `safetensors.torch.save_file` does for torch tensors of the same names, dtypes and shapes).
Further files hold PyTorch state dicts under the names models give them (class attributes, torchvision's
features/classifier, nested Sequentials, names whose order only the shapes tell or nothing tells), for the
3-4-2 network and for a small CNN, each beside its positional twin.
The files are tiny and committed; rerunning the script rewrites them byte for byte (NumPy stamps every
zip member 1980-01-01), given the same NumPy and safetensors versions.
"""
import json
import os
import sys
import zipfile

import numpy as np
from safetensors.numpy import save_file

out = sys.argv[1] if len(sys.argv) > 1 else "Tests/NetworksTests/Fixtures/weights"
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

# PyTorch state dicts as models name them (issue 40): the order of the layers is the modules' order,
# which `safetensors` loses (it sorts the names) and twoscale recovers from the names and shapes.
# The 3-4-2 network as an encoder/decoder (class attributes `self.encoder = nn.Linear(3, 4)`,
# `self.decoder = nn.Linear(4, 2)`): sorted, 'decoder' comes first; only the shapes tell the order.
save_file({"encoder.weight": W1, "encoder.bias": b1, "decoder.weight": W2, "decoder.bias": b2},
          path("encoder-decoder-bias-f64.safetensors"))
# A nested Sequential, nn.Sequential(nn.Sequential(Linear(3, 4), ReLU()), Linear(4, 2)), as NumPy.
np.savez(path("nested-bias-f64.npz"), **{"0.0.weight": W1, "0.0.bias": b1, "1.weight": W2, "1.bias": b2})
# Names that cannot be ordered: two 4×4 layers (--arch 4-4-4) named encoder and decoder.
E = rng.uniform(-1, 1, size=(4, 4))
D = rng.uniform(-1, 1, size=(4, 4))
save_file({"encoder.weight": E, "decoder.weight": D}, path("ambiguous-4-4-4.safetensors"))

# A small CNN, --arch 6x6x2-conv3k2-conv2k2-maxpool2-3-2 --bias, in PyTorch's layouts (Conv2d weights
# (F, C, k, k); the first Linear's columns in channel-first flatten order), under four namings.
cnn = [("conv", rng.uniform(-1, 1, size=(3, 2, 2, 2)), rng.uniform(-1, 1, size=3)),   # Conv2d(2, 3, 2)
       ("conv", rng.uniform(-1, 1, size=(2, 3, 2, 2)), rng.uniform(-1, 1, size=2)),   # Conv2d(3, 2, 2)
       ("fc", rng.uniform(-1, 1, size=(3, 8)), rng.uniform(-1, 1, size=3)),           # Linear(8, 3) after MaxPool2d(2), Flatten
       ("fc", rng.uniform(-1, 1, size=(2, 3)), rng.uniform(-1, 1, size=2))]           # Linear(3, 2)


def state_dict(names):
    """The parameters under these module names, in module (registration) order, as state_dict() lists them."""
    d = {}
    for name, (_, w, b) in zip(names, cnn):
        d[name + ".weight"], d[name + ".bias"] = w, b
    return d


# The reference: positional, W_1, b_1, …, W_4, b_4.
np.savez(path("cnn-positional-bias-f64.npz"), *[t for _, w, b in cnn for t in (w, b)])
# Class attributes conv1, conv2 (and a MaxPool2d), fc1, fc2: as safetensors (sorted) and as NumPy (module order).
classy = state_dict(["conv1", "conv2", "fc1", "fc2"])
save_file(classy, path("cnn-class-bias-f64.safetensors"))
np.savez(path("cnn-class-bias-f64.npz"), **classy)
# torchvision style: features = Sequential(Conv2d, ReLU, Conv2d, ReLU, MaxPool2d), classifier =
# Sequential(Dropout, Linear, ReLU, Dropout, Linear).
save_file(state_dict(["features.0", "features.2", "classifier.1", "classifier.4"]), path("cnn-features-bias-f64.safetensors"))
# Nested: Sequential(Sequential(Conv2d, ReLU, Conv2d, ReLU, MaxPool2d, Flatten), Linear, ReLU, Linear).
save_file(state_dict(["0.0", "0.2", "1", "3"]), path("cnn-nested-bias-f64.safetensors"))

# Refused: float16 (safetensors) and int64 (npz) tensors.
save_file({"0.weight": W1.astype(np.float16), "2.weight": W2.astype(np.float16)}, path("f16.safetensors"))
np.savez(path("int64.npz"), np.arange(12).reshape(4, 3), np.arange(8).reshape(2, 4))

print("wrote", len(os.listdir(out)), "files to", out)
