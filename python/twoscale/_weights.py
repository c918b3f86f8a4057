"""Writing a .safetensors weights file (float64) that `twoscale fisher --weights` reads."""

import array
import json
import math
import numbers
import os
import struct
import sys
from collections.abc import Mapping

__all__ = ["save_weights", "safetensors_bytes"]


def _plain(name, value):
    """A tensor-like as nested Python lists/tuples (or a number), plus its declared shape if known."""
    declared = None
    if hasattr(value, "detach"):  # torch.Tensor
        value = value.detach()
        if hasattr(value, "cpu"):
            value = value.cpu()
        try:
            value = value.numpy()
        except Exception:  # no NumPy, or a dtype NumPy lacks (bfloat16)
            pass
    shape = getattr(value, "shape", None)
    if shape is not None and not isinstance(value, (list, tuple)):
        try:
            declared = tuple(int(s) for s in shape)
        except TypeError:
            declared = None
    if isinstance(value, (list, tuple)):
        return value, declared
    if hasattr(value, "tolist"):  # NumPy arrays and scalars, array.array, memoryview, torch tensors
        return value.tolist(), declared
    return value, declared


def _number(name, x):
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise ValueError("tensor %r: %r (%s) is not a number" % (name, x, type(x).__name__))
    f = float(x)
    if not math.isfinite(f):
        raise ValueError("tensor %r contains %r: NaN and infinite values cannot be written" % (name, f))
    return f


def _shape_and_values(name, value):
    nested, declared = _plain(name, value)
    if not isinstance(nested, (list, tuple)):
        return [], [_number(name, nested)]
    shape = []
    probe = nested
    while isinstance(probe, (list, tuple)):
        shape.append(len(probe))
        if not probe:
            break
        probe = probe[0]
    flat = []

    def walk(node, depth):
        if depth == len(shape):
            if isinstance(node, (list, tuple)):
                raise ValueError("tensor %r is ragged: nested deeper than its shape %s" % (name, shape))
            flat.append(_number(name, node))
            return
        if not isinstance(node, (list, tuple)) or len(node) != shape[depth]:
            got = len(node) if isinstance(node, (list, tuple)) else "a number"
            raise ValueError("tensor %r is ragged: at depth %d expected %d entries, got %s"
                             % (name, depth, shape[depth], got))
        for child in node:
            walk(child, depth + 1)

    walk(nested, 0)
    if declared is not None and not flat and math.prod(declared) == 0:
        shape = list(declared)  # keep the zero-size dimensions that nesting cannot show
    return shape, flat


def safetensors_bytes(mapping):
    """The bytes of the .safetensors file :func:`save_weights` writes."""
    if not isinstance(mapping, Mapping) and hasattr(mapping, "state_dict"):
        mapping = mapping.state_dict()
    if not isinstance(mapping, Mapping):
        raise TypeError("save_weights needs a mapping of names to arrays (e.g. model.state_dict()), got %s"
                        % type(mapping).__name__)
    if len(mapping) == 0:
        raise ValueError("save_weights: the mapping is empty: there are no tensors to write")
    header = {}
    chunks = []
    offset = 0
    for name, value in mapping.items():
        if not isinstance(name, str):
            raise ValueError("tensor name %r is not a string" % (name,))
        if name == "__metadata__":
            raise ValueError("tensor name '__metadata__' is reserved by the safetensors format")
        shape, flat = _shape_and_values(name, value)
        data = array.array("d", flat)
        if sys.byteorder != "little":
            data.byteswap()
        raw = data.tobytes()
        header[name] = {"dtype": "F64", "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def save_weights(mapping, path):
    """Writes ``mapping`` (names to array-likes, in its order) as a float64 .safetensors file.

    Values may be torch tensors, NumPy arrays or anything with ``tolist()``, nested lists/tuples of
    numbers, or ``array.array``; a model's ``state_dict()`` can be passed as it is. Ragged nesting,
    non-numbers, NaN/inf and an empty mapping raise ValueError (naming the tensor). The file is written
    atomically (a temporary file in the same folder, then renamed). Returns the path.
    """
    blob = safetensors_bytes(mapping)
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(path)
    for attempt in range(100):
        tmp = os.path.join(folder, ".%s.%d.%d.tmp" % (base, os.getpid(), attempt))
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError("save_weights: could not create a temporary file next to %s" % path)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path
