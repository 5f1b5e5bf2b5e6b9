"""Mutant breaking CC-7: the cache root is resolved when ``cache_compile(...)`` is called (its cwd and
``$TORCHAIR_CACHE_HOME`` then), not at the first call."""

import os
import types

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def cache_compile(func, **kwargs):
    root = kwargs.get("cache_dir") or os.environ.get("TORCHAIR_CACHE_HOME") or ".torchair_cache"
    kwargs["cache_dir"] = os.path.abspath(root)
    return _ref.inference.cache_compile(func, **kwargs)


inference = types.SimpleNamespace(cache_compile=cache_compile, readable_cache=_ref.inference.readable_cache)
