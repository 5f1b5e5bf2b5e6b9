"""Mutant breaking EX-6: the Data ops left after the weights were replaced keep the indices they had with the weights
counted first (the order Dynamo lifts them in), instead of being numbered 0..n-1."""

import torchair_ref as _ref
from mutant_export_files import rewriting_export
from torchair_ref import CompilerConfig, get_npu_backend, inference, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def _keep_lifted_indices(model_def):
    ops = model_def.graph[0].op
    weights = sum(op.type in ("Const", "FileConstant") for op in ops)
    for op in ops:
        if op.type == "Data":
            op.attr["index"].i += weights


dynamo_export = rewriting_export(_keep_lifted_indices)
