"""Mutant breaking RC-3: the readable output file is left with mode 0644."""

import os
import types

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def readable_cache(cache_bin, print_output=True, file=None):
    text = _ref.inference.readable_cache(cache_bin, print_output=print_output, file=file)
    if file is not None:
        os.chmod(file, 0o644)
    return text


inference = types.SimpleNamespace(cache_compile=_ref.inference.cache_compile, readable_cache=readable_cache)
