"""Mutant breaking CC-18: keyword arguments of the compiled call are dropped when they hold tensors (only
positional tensors reach the function; the method's default stands in)."""

import types

import torch

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def cache_compile(func, **kwargs):
    compiled = _ref.inference.cache_compile(func, **kwargs)

    def call(*args, **kw):
        return compiled(*args, **{k: v for k, v in kw.items() if not isinstance(v, torch.Tensor)})

    return call


inference = types.SimpleNamespace(cache_compile=cache_compile, readable_cache=_ref.inference.readable_cache)
