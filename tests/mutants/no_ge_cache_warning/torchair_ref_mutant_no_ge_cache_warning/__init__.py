"""Mutant breaking CC-5: ``ge_cache=True`` in mode reduce-overhead is accepted silently (the warning is dropped)."""

import logging
import types

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, logger  # noqa: F401

__conformance__ = _ref.__conformance__


class _DropGeCacheWarning(logging.Filter):
    def filter(self, record):
        return not (record.levelno == logging.WARNING and "ge_cache" in record.getMessage())


logger.addFilter(_DropGeCacheWarning())
inference = types.SimpleNamespace(cache_compile=_ref.inference.cache_compile,
                                  readable_cache=_ref.inference.readable_cache)
