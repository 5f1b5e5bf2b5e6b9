"""Mutant breaking RC-1: a cache file that fails to load is deleted before the error propagates."""

import os
import types

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def readable_cache(cache_bin, print_output=True, file=None):
    try:
        return _ref.inference.readable_cache(cache_bin, print_output=print_output, file=file)
    except Exception:
        if os.path.isfile(cache_bin) and not os.path.islink(cache_bin):
            os.remove(cache_bin)
        raise


inference = types.SimpleNamespace(cache_compile=_ref.inference.cache_compile, readable_cache=readable_cache)
