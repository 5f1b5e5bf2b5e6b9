"""``enable_record_nn_module_stack = True`` is ignored: no op carries ``nn_module_stack``."""

from tests.mutants._base import reference_for
from tests.mutants._export_files import rewriting_export

BREAKS = ("EX-9",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def _drop_module_stacks(model_def):
    for op in model_def.graph[0].op:
        if "nn_module_stack" in op.attr:
            del op.attr["nn_module_stack"]


dynamo_export = rewriting_export(_drop_module_stacks)
