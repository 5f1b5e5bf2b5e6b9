"""Mutant breaking CC-12: the 'Skip cache as ... recompiled' UserWarning is swallowed."""

import types
import warnings

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def cache_compile(func, **kwargs):
    compiled = _ref.inference.cache_compile(func, **kwargs)

    def call(*args, **kw):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*Skip cache as")
            return compiled(*args, **kw)

    return call


inference = types.SimpleNamespace(cache_compile=cache_compile, readable_cache=_ref.inference.readable_cache)
