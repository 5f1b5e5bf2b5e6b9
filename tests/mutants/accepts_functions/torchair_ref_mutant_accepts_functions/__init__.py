"""Mutant breaking CC-2: anything that is not a bound method is accepted and returned uncompiled."""

import types

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def cache_compile(func, **kwargs):
    if not isinstance(func, types.MethodType):
        return func
    return _ref.inference.cache_compile(func, **kwargs)


inference = types.SimpleNamespace(cache_compile=cache_compile, readable_cache=_ref.inference.readable_cache)
