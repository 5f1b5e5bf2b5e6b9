"""Mutant breaking IMPL-1: ``logger`` is a ``logging.LoggerAdapter`` around the reference's logger, not a
``logging.Logger``."""

import logging

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, inference  # noqa: F401

__conformance__ = _ref.__conformance__

logger = logging.LoggerAdapter(_ref.logger, {})
