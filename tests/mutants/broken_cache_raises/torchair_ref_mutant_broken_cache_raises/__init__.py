"""Mutant breaking CC-17: a broken cache (the reference warns and recompiles) makes the call raise instead."""

import logging
import types

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, logger  # noqa: F401

__conformance__ = _ref.__conformance__


class _Warnings(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.seen = []

    def emit(self, record):
        self.seen.append(record.getMessage())


def cache_compile(func, **kwargs):
    compiled = _ref.inference.cache_compile(func, **kwargs)

    def call(*args, **kw):
        handler = _Warnings()
        logger.addHandler(handler)
        try:
            out = compiled(*args, **kw)
        finally:
            logger.removeHandler(handler)
        if handler.seen:
            raise RuntimeError(f"refusing to run after cache warnings: {handler.seen}")
        return out

    return call


inference = types.SimpleNamespace(cache_compile=cache_compile, readable_cache=_ref.inference.readable_cache)
