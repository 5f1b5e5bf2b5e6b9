"""Mutant breaking EX-9: ``enable_record_nn_module_stack = True`` is ignored: no op carries ``nn_module_stack``."""

import torchair_ref as _ref
from mutant_export_files import rewriting_export
from torchair_ref import CompilerConfig, get_npu_backend, inference, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def _drop_module_stacks(model_def):
    for op in model_def.graph[0].op:
        if "nn_module_stack" in op.attr:
            del op.attr["nn_module_stack"]


dynamo_export = rewriting_export(_drop_module_stacks)
