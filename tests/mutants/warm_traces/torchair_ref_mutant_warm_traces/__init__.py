"""Mutant breaking CC-14: every first call also traces the method with Dynamo, so a warm start is not trace-free."""

import types

import torch

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def cache_compile(func, **kwargs):
    compiled = _ref.inference.cache_compile(func, **kwargs)
    first = [True]

    def call(*args, **kw):
        if first[0]:
            first[0] = False
            with torch.no_grad():
                torch.compile(func, backend="eager")(*args, **kw)
        return compiled(*args, **kw)

    return call


inference = types.SimpleNamespace(cache_compile=cache_compile, readable_cache=_ref.inference.readable_cache)
