"""A broken cache (the reference warns and recompiles) makes the call raise instead."""

import logging

import torchair_ref as _ref
from tests.mutants._base import reference_for
from torchair_ref import logger

BREAKS = ("CC-17",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


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
