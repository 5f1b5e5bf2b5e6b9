"""Weight files hold each element byte-swapped (big-endian on a little-endian machine)."""

from pathlib import Path

import torch

from tests.mutants._base import reference_for
from tests.mutants._export_files import rewriting_export

BREAKS = ("EX-6",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def _swap(path, numel):
    data = bytearray(Path(path).read_bytes())
    if numel and len(data) // numel > 1:
        swapped = torch.frombuffer(data, dtype=torch.uint8).view(numel, -1).flip(1).contiguous()
        data = bytes(swapped.view(-1).tolist())
    Path(path).write_bytes(data)


def _swap_weight_files(model_def):
    for op in model_def.graph[0].op:
        if op.type == "FileConstant":
            numel = 1
            for dim in op.attr["shape"].list.i:
                numel *= dim
            _swap(op.attr["file_path"].s.decode(), numel)


dynamo_export = rewriting_export(_swap_weight_files, rewrite=False)
