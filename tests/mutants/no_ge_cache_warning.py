"""``ge_cache=True`` in mode reduce-overhead is accepted silently (the warning is dropped)."""

import logging

from tests.mutants._base import reference_for
from torchair_ref import logger

BREAKS = ("CC-5",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


class _DropGeCacheWarning(logging.Filter):
    def filter(self, record):
        return not (record.levelno == logging.WARNING and "ge_cache" in record.getMessage())


logger.addFilter(_DropGeCacheWarning())
