"""FileConstant's dtype attr holds the protobuf DataType number of its output desc (float32 = 1) instead of GE's C++
ge::DataType (float32 = 0), which EX-7 forbids too."""

from tests.mutants._base import reference_for
from tests.mutants._export_files import rewriting_export

BREAKS = ("EX-6",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def _protobuf_numbering(model_def):
    for op in model_def.graph[0].op:
        if op.type == "FileConstant":
            op.attr["dtype"].dt = op.output_desc[0].dtype


dynamo_export = rewriting_export(_protobuf_numbering)
