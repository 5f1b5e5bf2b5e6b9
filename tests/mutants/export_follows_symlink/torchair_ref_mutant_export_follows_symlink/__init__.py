"""Mutant breaking EX-2: a symlinked export_path is followed: the export is written into the link's target."""

import os

import torchair_ref as _ref
from torchair_ref import CompilerConfig, get_npu_backend, inference, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def dynamo_export(*args, model, export_path="export_file", export_name="export", **kwargs):
    if os.path.islink(export_path):
        export_path = os.path.realpath(export_path)
    return _ref.dynamo_export(*args, model=model, export_path=export_path, export_name=export_name, **kwargs)
