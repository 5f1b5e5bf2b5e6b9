"""Mutant breaking CC-20: the INFO record '... saved to <path>' is never emitted."""

import logging
import types

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, logger  # noqa: F401

__conformance__ = _ref.__conformance__


class _DropSaved(logging.Filter):
    def filter(self, record):
        return " saved to " not in record.getMessage()


logger.addFilter(_DropSaved())
inference = types.SimpleNamespace(cache_compile=_ref.inference.cache_compile,
                                  readable_cache=_ref.inference.readable_cache)
