"""Weight files keep the fqn's dots (``proj.0.weight``, not ``proj_0_weight``)."""

import os

from tests.mutants._base import reference_for
from tests.mutants._export_files import rewriting_export

BREAKS = ("EX-6",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def _dotted_names(model_def):
    for op in model_def.graph[0].op:
        if op.type == "FileConstant":
            # The reference names a weight's op by its fqn.
            old = op.attr["file_path"].s.decode()
            new = os.path.join(os.path.dirname(old), op.name)
            os.rename(old, new)
            op.attr["file_path"].s = new.encode()


dynamo_export = rewriting_export(_dotted_names)
