"""Keyword arguments of the compiled call are dropped when they hold tensors (only positional tensors reach the
function; the method's default stands in)."""

import torch

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("CC-18",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def cache_compile(func, **kwargs):
    compiled = _ref.inference.cache_compile(func, **kwargs)

    def call(*args, **kw):
        return compiled(*args, **{k: v for k, v in kw.items() if not isinstance(v, torch.Tensor)})

    return call
