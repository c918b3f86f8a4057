#!/usr/bin/env python3
"""Writes the CNN weights fixture of Tests/NetworksTests/Fixtures/weights, read by WeightsFormatTests:

    python3 scripts/make-cnn-fixture.py [OUT_DIR]     # NumPy only; default: Tests/NetworksTests/Fixtures/weights

A PyTorch-style state dict of the network `5x5x2-conv3k2-maxpool2-4` with biases, i.e. the
nn.Sequential(Conv2d(2, 3, 2), ReLU(), MaxPool2d(2), Flatten(), Linear(12, 4)), saved with NumPy's
np.savez under PyTorch's names and layouts: `0.weight` (3, 2, 2, 2) = (out, in, kh, kw), `0.bias` (3),
`4.weight` (4, 12) whose columns follow PyTorch's channel-first flattening (C, H, W), `4.bias` (4).

`cnn-expected.json` holds three inputs (in twoscale's order: each image flattened height, width,
channel, channels fastest) and the logits that this script computes for them with PyTorch's semantics,
written out in plain loops (cross-correlation in CHW, ReLU, 2×2 max pooling, flatten CHW, affine map),
so the test checks twoscale's reading of the layouts against a computation that shares none of its code.
"""
import json
import os
import sys

import numpy as np

out = sys.argv[1] if len(sys.argv) > 1 else "Tests/NetworksTests/Fixtures/weights"
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(20261122)
H = W = 5
C, F, K = 2, 3, 2
conv_w = rng.uniform(-1, 1, size=(F, C, K, K))
conv_b = rng.uniform(-1, 1, size=F)
OH = OW = H - K + 1          # 4
PH = PW = OH // 2            # 2
dense_w = rng.uniform(-1, 1, size=(4, F * PH * PW))
dense_b = rng.uniform(-1, 1, size=4)
inputs_hwc = rng.uniform(0, 1, size=(3, H, W, C))


def forward(x_hwc):
    x = np.transpose(x_hwc, (2, 0, 1))  # (C, H, W), PyTorch's layout
    z = np.zeros((F, OH, OW))
    for f in range(F):
        for i in range(OH):
            for j in range(OW):
                s = conv_b[f]
                for c in range(C):
                    for r in range(K):
                        for q in range(K):
                            s += conv_w[f, c, r, q] * x[c, i + r, j + q]
                z[f, i, j] = max(s, 0.0)
    p = np.zeros((F, PH, PW))
    for f in range(F):
        for i in range(PH):
            for j in range(PW):
                p[f, i, j] = max(z[f, 2 * i + a, 2 * j + b] for a in range(2) for b in range(2))
    flat = p.reshape(-1)  # channel-first, as torch.flatten
    return [float(dense_b[o] + sum(dense_w[o, k] * flat[k] for k in range(flat.size))) for o in range(4)]


np.savez(os.path.join(out, "cnn-pytorch.npz"), **{"0.weight": conv_w, "0.bias": conv_b,
                                                  "4.weight": dense_w, "4.bias": dense_b})
with open(os.path.join(out, "cnn-expected.json"), "w") as f:
    json.dump({"arch": "5x5x2-conv3k2-maxpool2-4", "bias": True,
               "inputs": [x.reshape(-1).tolist() for x in inputs_hwc],
               "logits": [forward(x) for x in inputs_hwc]}, f, indent=1)
    f.write("\n")
