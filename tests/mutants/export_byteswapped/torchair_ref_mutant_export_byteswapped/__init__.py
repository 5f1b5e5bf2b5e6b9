"""Mutant breaking EX-6: weight files hold each element byte-swapped (big-endian on a little-endian machine)."""

import os

import torch
import torch.distributed as dist

import torchair_ref as _ref
from torchair_ref import CompilerConfig, get_npu_backend, inference, logger  # noqa: F401
from torchair_ref.export import ge_ir

__conformance__ = _ref.__conformance__


def _swap(path, numel):
    data = bytearray(open(path, "rb").read())
    if numel and len(data) // numel > 1:
        swapped = torch.frombuffer(data, dtype=torch.uint8).view(numel, -1).flip(1).contiguous()
        data = bytes(swapped.view(-1).tolist())
    open(path, "wb").write(data)


def dynamo_export(*args, model, export_path="export_file", export_name="export", **kwargs):
    _ref.dynamo_export(*args, model=model, export_path=export_path, export_name=export_name, **kwargs)
    rank = dist.get_rank() if dist.is_available() and dist.is_initialized() else None
    name = os.path.basename(os.path.normpath(export_name))
    air = os.path.join(export_path, f"{name}{'' if rank is None else rank}.air")
    if os.path.islink(export_path) or not os.path.isfile(air):
        return None
    for op in ge_ir.ModelDef.FromString(open(air, "rb").read()).graph[0].op:
        if op.type == "FileConstant":
            numel = 1
            for dim in op.attr["shape"].list.i:
                numel *= dim
            _swap(op.attr["file_path"].s.decode(), numel)
    return None
