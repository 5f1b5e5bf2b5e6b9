"""Mutant breaking CC-6: the cache directory is created at cache_compile(...) time instead of at the first call."""

import os
import types

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def cache_compile(func, **kwargs):
    compiled = _ref.inference.cache_compile(func, **kwargs)
    root = kwargs.get("cache_dir") or os.environ.get("TORCHAIR_CACHE_HOME") or ".torchair_cache"
    os.makedirs(root, exist_ok=True)
    return compiled


inference = types.SimpleNamespace(cache_compile=cache_compile, readable_cache=_ref.inference.readable_cache)
