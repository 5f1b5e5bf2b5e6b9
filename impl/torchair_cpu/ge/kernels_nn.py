"""IMPL-4: GE kernels for matrix products and normalisations (CANN semantics: transposes as attrs, bias as an
optional input, LayerNormV4's three outputs)."""

from __future__ import annotations

import torch

from torchair_cpu.ge.kernels_shape import ints
from torchair_cpu.ge.registry import FLOATS, RAW_OPS, OpView, kernel

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
    return _matmul(inputs[0], inputs[1], bias, op.b("transpose_x1", False), op.b("transpose_x2", False), op)


@kernel("MatMulV2", dtypes=_MM, source=f"{RAW_OPS}:38228 REG_OP(MatMulV2)")
def mat_mul_v2(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """As MatMul, with an optional offset_w that must be absent here."""
    _no_offset(op, inputs)
    bias = inputs[2] if len(inputs) > 2 else None
    return _matmul(inputs[0], inputs[1], bias, op.b("transpose_x1", False), op.b("transpose_x2", False), op)


@kernel("BatchMatMul", dtypes=_MM, source=f"{RAW_OPS}:38433 REG_OP(BatchMatMul)")
def batch_mat_mul(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """Batched x1 @ x2 with broadcast batch dims, last two dims transposed by ``adj_x1``/``adj_x2``."""
    return _matmul(inputs[0], inputs[1], None, op.b("adj_x1", False), op.b("adj_x2", False), op)


@kernel("BatchMatMulV2", dtypes=_MM, source=f"{RAW_OPS}:38485 REG_OP(BatchMatMulV2)")
def batch_mat_mul_v2(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """As BatchMatMul, with an optional bias and an offset_w that must be absent here."""
    _no_offset(op, inputs)
    bias = inputs[2] if len(inputs) > 2 else None
    return _matmul(inputs[0], inputs[1], bias, op.b("adj_x1", False), op.b("adj_x2", False), op)


@kernel("LayerNormV4", dtypes=FLOATS,
        source=f"{RAW_OPS}:89026 REG_OP(LayerNormV4) (T1 = float, float16, bf16 per CANN's LayerNormV4 docs)")
def layer_norm_v4(op: OpView, inputs: list[torch.Tensor | None]) -> tuple[torch.Tensor, ...]:
    """y, mean, rstd over the trailing ``normalized_shape`` dims (mean/rstd keep those dims as 1, in float32 for
    half inputs as CANN computes them), ``epsilon`` default 1e-5; gamma/beta optional."""
    x = inputs[0]
    normalized = ints(inputs[1], op, "normalized_shape")
    gamma = inputs[2] if len(inputs) > 2 else None
    beta = inputs[3] if len(inputs) > 3 else None
    if list(x.shape[x.dim() - len(normalized):]) != normalized:
        raise op.fail(f"normalized_shape {normalized} is not the trailing shape of {list(x.shape)}")
    y, mean, rstd = torch.native_layer_norm(x.float(), normalized, None if gamma is None else gamma.float(),
                                            None if beta is None else beta.float(), op.f("epsilon", 1e-5))
    return y.to(x.dtype), mean, rstd


@kernel("SoftmaxV2", dtypes=FLOATS | {"DT_DOUBLE"}, source=f"{RAW_OPS}:49997 REG_OP(SoftmaxV2)")
def softmax_v2(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """exp(x) / sum(exp(x)) over ``axes`` (default [-1]); ``half_to_float`` gives a float32 result for float16."""
    x = inputs[0]
    axes = op.ints("axes", [-1])
    out_dtype = torch.float32 if op.b("half_to_float", False) and x.dtype == torch.float16 else x.dtype
    work = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    shifted = work - work.amax(dim=axes, keepdim=True)
    exp = shifted.exp()
    return (exp / exp.sum(dim=axes, keepdim=True)).to(out_dtype)


@kernel("MaskedFill", dtypes={"DT_FLOAT", "DT_BF16", "DT_FLOAT16", "DT_INT8", "DT_INT32", "DT_INT64"},
        source=f"{RAW_OPS}:79279 REG_OP(MaskedFill)")
def masked_fill(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x where mask is false, value (cast to x's dtype) where it is true; mask and value broadcast against x."""
    x, mask, value = inputs[0], inputs[1], inputs[2]
    if mask.dtype != torch.bool:
        raise op.fail(f"mask must be bool, got {mask.dtype}")
    out = torch.where(mask, value.to(x.dtype), x)
    if out.shape != x.shape:
        raise op.fail(f"mask {list(mask.shape)} does not broadcast to x {list(x.shape)}")
    return out
