"""``logger`` is a ``logging.LoggerAdapter`` around the reference's logger, not a ``logging.Logger``."""

import logging

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("IMPL-1",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's

logger = logging.LoggerAdapter(_ref.logger, {})
