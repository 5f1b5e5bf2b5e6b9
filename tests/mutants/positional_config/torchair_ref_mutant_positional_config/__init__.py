"""Mutant breaking CC-1: config (and more) may be passed positionally."""

import types

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def cache_compile(func, config=None, *rest, **kwargs):
    return _ref.inference.cache_compile(func, config=config, **kwargs)


inference = types.SimpleNamespace(cache_compile=cache_compile, readable_cache=_ref.inference.readable_cache)
