"""Mutant breaking CC-8: an explicit cache_dir gets an extra 'v2' level under it (a different path formula)."""

import os
import types

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def cache_compile(func, **kwargs):
    if kwargs.get("cache_dir"):
        kwargs["cache_dir"] = os.path.join(os.fspath(kwargs["cache_dir"]), "v2")
    return _ref.inference.cache_compile(func, **kwargs)


inference = types.SimpleNamespace(cache_compile=cache_compile, readable_cache=_ref.inference.readable_cache)
