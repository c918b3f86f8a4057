#!/usr/bin/env python3
"""Exports scikit-learn's bundled digits (1 797 8x8 images, 10 classes) to gzipped IDX files.

    python3 scripts/export-digits.py [DIR]        (default DIR: data/digits)

writes DIR/{train,test}-{images-idx3,labels-idx1}-ubyte.gz: a fixed split (seeded permutation, seed 0)
of 1 000 training and 797 test images. Pixel values 0-16 are scaled to bytes 0-255 (round(v*255/16)),
so twoscale's IDX reader gives the same [0, 1] range as Fashion-MNIST. The set-up script installs
scikit-learn (Debian's python3-sklearn) and runs this; the files are not kept in git.
"""
import gzip
import os
import struct
import sys

import numpy as np
from sklearn.datasets import load_digits


def write_images(path, images):
    n, rows, cols = images.shape
    tmp = path + ".tmp"
    with gzip.GzipFile(tmp, "wb", mtime=0) as f:
        f.write(struct.pack(">IIII", 0x00000803, n, rows, cols))
        f.write(images.astype(np.uint8).tobytes())
    os.replace(tmp, path)


def write_labels(path, labels):
    tmp = path + ".tmp"
    with gzip.GzipFile(tmp, "wb", mtime=0) as f:
        f.write(struct.pack(">II", 0x00000801, len(labels)))
        f.write(labels.astype(np.uint8).tobytes())
    os.replace(tmp, path)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "data/digits"
    os.makedirs(out, exist_ok=True)
    d = load_digits()
    images = np.rint(d.images * 255.0 / 16.0).clip(0, 255)
    order = np.random.RandomState(0).permutation(len(images))
    train, test = order[:1000], order[1000:]
    for name, idx in (("train", train), ("test", test)):
        write_images(os.path.join(out, f"{name}-images-idx3-ubyte.gz"), images[idx])
        write_labels(os.path.join(out, f"{name}-labels-idx1-ubyte.gz"), d.target[idx])
    print(f"digits: {len(train)} training and {len(test)} test images in {out}")


if __name__ == "__main__":
    main()
