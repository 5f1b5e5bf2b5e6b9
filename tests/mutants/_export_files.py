"""What the file-rewriting export mutants share: run the reference's dynamo_export, then change what it wrote.

`rewriting_export(edit)` returns a `dynamo_export` that, after the reference's export, opens this rank's `.air` and
calls `edit(model_def)`; the mutant's one broken behaviour lives in `edit`. With `rewrite=True` the changed graph is
written back to the `.air` and its `dynamo.pbtxt`. Nothing is done where the reference wrote nothing (EX-2).
"""

import os
from pathlib import Path

import torch.distributed as dist

import torchair_ref as _ref
from ge_executor import ge_ir
from torchair_ref.export import pbtxt


def rewriting_export(edit, *, rewrite=True):
    def dynamo_export(*args, model, export_path="export_file", export_name="export", **kwargs):
        _ref.dynamo_export(*args, model=model, export_path=export_path, export_name=export_name, **kwargs)
        rank = dist.get_rank() if dist.is_available() and dist.is_initialized() else None
        name = os.path.basename(os.path.normpath(export_name))
        air = Path(export_path, f"{name}{'' if rank is None else rank}.air")
        rank_dir = Path(export_path) if rank is None else Path(export_path, f"rank_{rank}")
        if os.path.islink(export_path) or not air.is_file():
            return None
        model_def = ge_ir.ModelDef.FromString(air.read_bytes())
        edit(model_def)
        if rewrite:
            air.write_bytes(model_def.SerializeToString())
            (rank_dir / "dynamo.pbtxt").write_text(pbtxt.to_pbtxt(model_def.graph[0]))
        return None

    return dynamo_export
