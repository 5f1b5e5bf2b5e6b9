"""Mutant breaking RC-2: the readable text lacks its line of 100 '='."""

import types

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def readable_cache(cache_bin, print_output=True, file=None):
    text = _ref.inference.readable_cache(cache_bin, print_output=False, file=file)
    text = text.replace("=" * 100, "-" * 100)
    if print_output:
        print(text)
    return text


inference = types.SimpleNamespace(cache_compile=_ref.inference.cache_compile, readable_cache=readable_cache)
