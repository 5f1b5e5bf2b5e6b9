"""Mutant breaking EX-6: weight files keep the fqn's dots (``proj.0.weight``, not ``proj_0_weight``)."""

import os

import torch.distributed as dist

import torchair_ref as _ref
from torchair_ref import CompilerConfig, get_npu_backend, inference, logger  # noqa: F401
from torchair_ref.export import ge_ir, graph

__conformance__ = _ref.__conformance__


def dynamo_export(*args, model, export_path="export_file", export_name="export", **kwargs):
    _ref.dynamo_export(*args, model=model, export_path=export_path, export_name=export_name, **kwargs)
    rank = dist.get_rank() if dist.is_available() and dist.is_initialized() else None
    name = os.path.basename(os.path.normpath(export_name))
    air = os.path.join(export_path, f"{name}{'' if rank is None else rank}.air")
    rank_dir = export_path if rank is None else os.path.join(export_path, f"rank_{rank}")
    if os.path.islink(export_path) or not os.path.isfile(air):
        return None
    model_def = ge_ir.ModelDef.FromString(open(air, "rb").read())
    for op in model_def.graph[0].op:
        if op.type == "FileConstant":
            # The reference names a weight's op by its fqn.
            old = op.attr["file_path"].s.decode()
            new = os.path.join(os.path.dirname(old), op.name)
            os.rename(old, new)
            op.attr["file_path"].s = new.encode()
    open(air, "wb").write(model_def.SerializeToString())
    open(os.path.join(rank_dir, "dynamo.pbtxt"), "w").write(graph.to_pbtxt(model_def.graph[0]))
    return None
