"""Mutant breaking EX-6: weight files keep the fqn's dots (``proj.0.weight``, not ``proj_0_weight``)."""

import os

import torchair_ref as _ref
from mutant_export_files import rewriting_export
from torchair_ref import CompilerConfig, get_npu_backend, inference, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def _dotted_names(model_def):
    for op in model_def.graph[0].op:
        if op.type == "FileConstant":
            # The reference names a weight's op by its fqn.
            old = op.attr["file_path"].s.decode()
            new = os.path.join(os.path.dirname(old), op.name)
            os.rename(old, new)
            op.attr["file_path"].s = new.encode()


dynamo_export = rewriting_export(_dotted_names)
