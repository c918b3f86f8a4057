"""A tiny stand-in for `torch`, enough for the README's "Your own model" block (tests only).

Pure Python: tensors are nested lists; nn.Linear uses PyTorch's U(-1/sqrt(in), 1/sqrt(in)) init
from a seeded random.Random; torch.manual_seed reseeds it.
"""

import random as _random

_rng = _random.Random(0)


def manual_seed(seed):
    _rng.seed(seed)
    return _rng


def _shape(data):
    shape = []
    while isinstance(data, list):
        shape.append(len(data))
        if not data:
            break
        data = data[0]
    return tuple(shape)


class _NDArray:
    """What Tensor.numpy() returns here: only `shape` and `tolist()` (no NumPy needed)."""

    def __init__(self, data):
        self._data = data
        self.shape = _shape(data)

    def tolist(self):
        return _copy(self._data)


def _copy(data):
    return [_copy(x) for x in data] if isinstance(data, list) else data


class Tensor:
    def __init__(self, data):
        self._data = data
        self.shape = _shape(data)

    def detach(self):
        return self

    def cpu(self):
        return self

    def numpy(self):
        return _NDArray(_copy(self._data))

    def tolist(self):
        return _copy(self._data)

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def __repr__(self):
        return "tensor(%r)" % (self._data,)


def tensor(data):
    return Tensor(_copy(list(data)))


def _fill(shape, draw):
    if len(shape) == 1:
        return [draw() for _ in range(shape[0])]
    return [_fill(shape[1:], draw) for _ in range(shape[0])]


def randn(*shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return Tensor(_fill(shape, lambda: _rng.gauss(0.0, 1.0)))


def _uniform(shape, bound):
    return Tensor(_fill(shape, lambda: _rng.uniform(-bound, bound)))


from . import nn  # noqa: E402  (nn uses the helpers above)
