"""Mutant breaking EX-6: the Data ops left after the weights were replaced keep the indices they had with the weights
counted first (the order Dynamo lifts them in), instead of being numbered 0..n-1."""

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
    ops = model_def.graph[0].op
    weights = sum(op.type in ("Const", "FileConstant") for op in ops)
    for op in ops:
        if op.type == "Data":
            op.attr["index"].i += weights
    open(air, "wb").write(model_def.SerializeToString())
    open(os.path.join(rank_dir, "dynamo.pbtxt"), "w").write(graph.to_pbtxt(model_def.graph[0]))
    return None
