"""The Data ops left after the weights were replaced keep the indices they had with the weights counted first (the order
Dynamo lifts them in), instead of being numbered 0..n-1."""

from tests.mutants._base import reference_for
from tests.mutants._export_files import rewriting_export

BREAKS = ("EX-6",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def _keep_lifted_indices(model_def):
    ops = model_def.graph[0].op
    weights = sum(op.type in ("Const", "FileConstant") for op in ops)
    for op in ops:
        if op.type == "Data":
            op.attr["index"].i += weights


dynamo_export = rewriting_export(_keep_lifted_indices)
