"""Inputs that do not fit the cached graph run eagerly instead of raising AssertionError."""

import torch

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("CC-15",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def cache_compile(func, **kwargs):
    compiled = _ref.inference.cache_compile(func, **kwargs)

    def call(*args, **kw):
        try:
            return compiled(*args, **kw)
        except AssertionError as exc:
            if "expected size" not in str(exc):
                raise
            with torch.no_grad():
                return func(*args, **kw)

    return call
