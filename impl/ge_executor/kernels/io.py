"""EX-11, IMPL-4: GE kernels that produce values from the graph itself: ``Const`` (inline ``TensorDef``) and
``FileConstant`` (a raw weight file, GE_IR.md "Conventions")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import torch

from ge_executor import ge_ir
from ge_executor.registry import RAW_OPS, OpView, kernel, torch_dtype


def tensor_from_bytes(data: bytes, dtype: torch.dtype, shape: list[int], what: str,
                      fail: Callable[[str], Exception]) -> torch.Tensor:
    """A tensor of ``shape``/``dtype`` read from raw little-endian ``data``; ``fail(why)`` when the size differs."""
    numel = 1
    for d in shape:
        if d < 0:
            raise fail(f"{what} has a symbolic dim in its shape {shape}; a constant needs a static shape")
        numel *= d
    want = numel * torch.empty((), dtype=dtype).element_size()
    if len(data) != want:
        raise fail(f"{what} holds {len(data)} bytes, but shape {shape} of {dtype} needs {want}")
    if numel == 0:
        return torch.empty(shape, dtype=dtype)
    return torch.frombuffer(bytearray(data), dtype=dtype).reshape(shape)


@kernel("Const", dtypes=None, source="GE_IR.md: attr value = TensorDef")
def const(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """The ``value`` TensorDef: desc (protobuf dtype numbering, shape) and raw data."""
    if not op.has("value"):
        raise op.fail("lacks its required attr 'value' (a TensorDef)")
    value = op.op.attr["value"].t
    name = ge_ir.proto_dtype_name(value.desc.dtype)
    dtype = torch_dtype(name, f"Const {op.name!r}")
    return tensor_from_bytes(value.data, dtype, list(value.desc.shape.dim), f"Const {op.name!r}", op.fail)


@kernel("FileConstant", dtypes=None, source=f"{RAW_OPS}:1095 REG_OP(FileConstant)")
def file_constant(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """The raw bytes of ``file_path`` (relative paths against the graph's weights dir) as ``shape``/``dtype`` (a
    ``dt`` attr, GE's C++ numbering)."""
    path = Path(op.s("file_path").decode())
    if not path.is_absolute():
        if op.weights_dir is None:
            raise op.fail(f"file_path {str(path)!r} is relative; pass weights_dir= to load() to resolve it")
        path = op.weights_dir / path
    if not path.is_file():
        raise op.fail(f"weight file {str(path)!r} does not exist")
    return tensor_from_bytes(path.read_bytes(), op.dt("dtype"), op.ints("shape"), f"weight file {str(path)!r}",
                             op.fail)
