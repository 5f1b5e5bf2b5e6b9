"""Mutant breaking CC-13: a graph rejected for RNG runs eagerly instead of raising."""

import types

import torch._dynamo.exc

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def cache_compile(func, **kwargs):
    compiled = _ref.inference.cache_compile(func, **kwargs)

    def call(*args, **kw):
        try:
            return compiled(*args, **kw)
        except torch._dynamo.exc.BackendCompilerFailed:
            with torch.no_grad():
                return func(*args, **kw)

    return call


inference = types.SimpleNamespace(cache_compile=cache_compile, readable_cache=_ref.inference.readable_cache)
