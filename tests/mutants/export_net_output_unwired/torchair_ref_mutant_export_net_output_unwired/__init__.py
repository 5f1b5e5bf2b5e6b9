"""Mutant breaking EX-7: the .air's NetOutput op has no inputs (the graph's result is not wired to it)."""

import torchair_ref as _ref
from mutant_export_files import rewriting_export
from torchair_ref import CompilerConfig, get_npu_backend, inference, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def _unwire_net_output(model_def):
    for op in model_def.graph[0].op:
        if op.type == "NetOutput":
            del op.input[:]


dynamo_export = rewriting_export(_unwire_net_output)
