"""Mutant breaking IMPL-2: ``__conformance__["versions"]`` leaves out the torch version."""

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, inference, logger  # noqa: F401

__conformance__ = {**_ref.__conformance__,
                   "versions": {k: v for k, v in _ref.__conformance__["versions"].items() if k != "torch"}}
