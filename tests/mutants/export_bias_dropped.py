"""Every linear layer's bias is cut out of the .air (the Add of the bias is bypassed, or MatMulV2's bias input omitted),
so the graph no longer computes the model; its structure stays valid (EX-7)."""

from tests.mutants._base import reference_for
from tests.mutants._export_files import rewriting_export

BREAKS = ("EX-11",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def _drop_biases(model_def):
    graph = model_def.graph[0]
    biases = {f"{op.name}:0" for op in graph.op if op.name.endswith("bias")}
    bypass = {}
    for op in graph.op:
        if op.type == "MatMulV2" and len(op.input) > 2 and op.input[2] in biases:
            op.input[2] = ""
        elif op.type == "Add" and len(op.input) == 2 and op.input[1] in biases:
            bypass[f"{op.name}:0"] = op.input[0]
    for op in graph.op:
        for k, edge in enumerate(op.input):
            op.input[k] = bypass.get(edge, edge)


dynamo_export = rewriting_export(_drop_biases)
