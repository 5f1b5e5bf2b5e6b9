"""Tensor outputs come back requiring grad (an autograd graph to call backward on)."""

import torch

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("CC-16",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def cache_compile(func, **kwargs):
    compiled = _ref.inference.cache_compile(func, **kwargs)

    def call(*args, **kw):
        out = compiled(*args, **kw)
        if isinstance(out, torch.Tensor) and out.is_floating_point():
            return out.detach().requires_grad_() * 1
        return out

    return call
