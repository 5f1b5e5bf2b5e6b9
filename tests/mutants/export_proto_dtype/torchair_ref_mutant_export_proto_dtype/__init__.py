"""Mutant breaking EX-6/EX-7: FileConstant's dtype attr holds the protobuf DataType number of its output desc
(float32 = 1) instead of GE's C++ ge::DataType (float32 = 0)."""

import torchair_ref as _ref
from mutant_export_files import rewriting_export
from torchair_ref import CompilerConfig, get_npu_backend, inference, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def _protobuf_numbering(model_def):
    for op in model_def.graph[0].op:
        if op.type == "FileConstant":
            op.attr["dtype"].dt = op.output_desc[0].dtype


dynamo_export = rewriting_export(_protobuf_numbering)
