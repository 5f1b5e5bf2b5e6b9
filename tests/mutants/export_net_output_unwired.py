"""The .air's NetOutput op has no inputs (the graph's result is not wired to it)."""

from tests.mutants._base import reference_for
from tests.mutants._export_files import rewriting_export

BREAKS = ("EX-7",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def _unwire_net_output(model_def):
    for op in model_def.graph[0].op:
        if op.type == "NetOutput":
            del op.input[:]


dynamo_export = rewriting_export(_unwire_net_output)
