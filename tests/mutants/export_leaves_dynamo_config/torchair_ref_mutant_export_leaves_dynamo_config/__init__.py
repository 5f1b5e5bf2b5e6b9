"""Mutant breaking EX-10: an export leaves Dynamo's config changed (every later compile assumes static shapes)."""

import torch._dynamo

import torchair_ref as _ref
from torchair_ref import CompilerConfig, get_npu_backend, inference, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def dynamo_export(*args, **kwargs):
    result = _ref.dynamo_export(*args, **kwargs)
    torch._dynamo.config.assume_static_by_default = False
    return result
