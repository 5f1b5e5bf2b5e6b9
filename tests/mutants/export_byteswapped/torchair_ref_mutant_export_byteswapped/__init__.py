"""Mutant breaking EX-6: weight files hold each element byte-swapped (big-endian on a little-endian machine)."""

from pathlib import Path

import torch

import torchair_ref as _ref
from mutant_export_files import rewriting_export
from torchair_ref import CompilerConfig, get_npu_backend, inference, logger  # noqa: F401

__conformance__ = _ref.__conformance__


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
