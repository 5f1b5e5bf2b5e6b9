"""Mutant breaking CC-4: when config and backend disagree, the backend is silently dropped (no ValueError)."""

import types

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def cache_compile(func, **kwargs):
    backend, config = kwargs.get("backend"), kwargs.get("config")
    if backend is not None and config is not None and backend.keywords.get("compiler_config") != config:
        kwargs.pop("backend")
    return _ref.inference.cache_compile(func, **kwargs)


inference = types.SimpleNamespace(cache_compile=cache_compile, readable_cache=_ref.inference.readable_cache)
