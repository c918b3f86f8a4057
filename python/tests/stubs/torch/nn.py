"""torch.nn stand-in: Module, Sequential, Linear, ReLU (tests only)."""

import collections
import math

from . import _uniform


class Module:
    def _parameters(self):
        return []

    def state_dict(self):
        return collections.OrderedDict(self._parameters())


class Linear(Module):
    def __init__(self, in_features, out_features, bias=True):
        bound = 1.0 / math.sqrt(in_features)  # PyTorch's default init for weight and bias
        self.in_features, self.out_features = in_features, out_features
        self.weight = _uniform((out_features, in_features), bound)
        self.bias = _uniform((out_features,), bound) if bias else None

    def _parameters(self):
        return [("weight", self.weight)] + ([("bias", self.bias)] if self.bias is not None else [])


class ReLU(Module):
    pass


class Sequential(Module):
    def __init__(self, *modules):
        self._modules = list(modules)

    def __getitem__(self, i):
        return self._modules[i]

    def __len__(self):
        return len(self._modules)

    def _parameters(self):
        return [("%d.%s" % (i, name), t) for i, m in enumerate(self._modules) for name, t in m._parameters()]
