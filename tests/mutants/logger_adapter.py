"""``logger`` is a ``logging.LoggerAdapter`` around the reference's logger, not a ``logging.Logger``."""

import logging

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("IMPL-1",)

logger = logging.LoggerAdapter(_ref.logger, {})


__getattr__ = reference_for(globals())
