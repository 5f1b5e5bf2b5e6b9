"""Mutant breaking CC-19: ``custom_decompositions`` given to ``cache_compile`` is not applied."""

import types

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def cache_compile(func, **kwargs):
    kwargs.pop("custom_decompositions", None)
    return _ref.inference.cache_compile(func, **kwargs)


inference = types.SimpleNamespace(cache_compile=cache_compile, readable_cache=_ref.inference.readable_cache)
