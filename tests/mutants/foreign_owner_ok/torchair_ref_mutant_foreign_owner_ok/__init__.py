"""Mutant breaking CC-3: a cache_dir owned by another user is accepted (the cache goes to a private dir instead)."""

import tempfile
import types

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def cache_compile(func, **kwargs):
    try:
        return _ref.inference.cache_compile(func, **kwargs)
    except ValueError as exc:
        if "must be owned by the current user" not in str(exc):
            raise
        kwargs["cache_dir"] = tempfile.mkdtemp()
        return _ref.inference.cache_compile(func, **kwargs)


inference = types.SimpleNamespace(cache_compile=cache_compile, readable_cache=_ref.inference.readable_cache)
