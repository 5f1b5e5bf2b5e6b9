"""EX-11, IMPL-4: GE matrix-product kernels (CANN semantics: transposes as attrs, bias as an optional input, no
quantisation offset)."""

from __future__ import annotations

import torch

from ge_executor.registry import FLOATS, RAW_OPS, OpView, kernel, required

_MM = FLOATS | {"DT_INT32"}  # the float and int32 entries; int8/int4 need quantisation offsets (offset_w)


def _matmul(x1: torch.Tensor, x2: torch.Tensor, bias: torch.Tensor | None, t1: bool, t2: bool,
            op: OpView) -> torch.Tensor:
    if x1.dim() < 2 or x2.dim() < 2:
        raise op.fail(f"inputs must be at least 2-d, got {list(x1.shape)} and {list(x2.shape)}")
    a = x1.transpose(-1, -2) if t1 else x1
    b = x2.transpose(-1, -2) if t2 else x2
    if a.shape[-1] != b.shape[-2]:
        raise op.fail(f"inner dims differ: {list(a.shape)} @ {list(b.shape)}")
    out = torch.matmul(a, b)
    return out if bias is None else out + bias


def _no_offset(op: OpView, inputs: list[torch.Tensor | None]) -> None:
    if len(inputs) > 3 and inputs[3] is not None:
        raise op.fail("offset_w (an int8 quantisation offset) is not supported")


@kernel("MatMul", dtypes=_MM, source=f"{RAW_OPS}:38167 REG_OP(MatMul)")
def mat_mul(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """2-d x1 @ x2 (each transposed by ``transpose_x1``/``transpose_x2``) + optional bias."""
    bias = inputs[2] if len(inputs) > 2 else None
    x1, x2 = required(op, inputs, 0), required(op, inputs, 1)
    return _matmul(x1, x2, bias, op.b("transpose_x1", False), op.b("transpose_x2", False), op)


@kernel("MatMulV2", dtypes=_MM, source=f"{RAW_OPS}:38228 REG_OP(MatMulV2)")
def mat_mul_v2(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """As MatMul, with an optional offset_w that must be absent here."""
    _no_offset(op, inputs)
    bias = inputs[2] if len(inputs) > 2 else None
    x1, x2 = required(op, inputs, 0), required(op, inputs, 1)
    return _matmul(x1, x2, bias, op.b("transpose_x1", False), op.b("transpose_x2", False), op)


@kernel("BatchMatMul", dtypes=_MM, source=f"{RAW_OPS}:38433 REG_OP(BatchMatMul)")
def batch_mat_mul(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """Batched x1 @ x2 with broadcast batch dims, last two dims transposed by ``adj_x1``/``adj_x2``."""
    x1, x2 = required(op, inputs, 0), required(op, inputs, 1)
    return _matmul(x1, x2, None, op.b("adj_x1", False), op.b("adj_x2", False), op)


@kernel("BatchMatMulV2", dtypes=_MM, source=f"{RAW_OPS}:38485 REG_OP(BatchMatMulV2)")
def batch_mat_mul_v2(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """As BatchMatMul, with an optional bias and an offset_w that must be absent here."""
    _no_offset(op, inputs)
    bias = inputs[2] if len(inputs) > 2 else None
    x1, x2 = required(op, inputs, 0), required(op, inputs, 1)
    return _matmul(x1, x2, bias, op.b("adj_x1", False), op.b("adj_x2", False), op)
