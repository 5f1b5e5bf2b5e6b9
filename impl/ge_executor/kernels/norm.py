"""EX-11, IMPL-4: GE normalisation kernels (CANN semantics): ``LayerNormV4`` with its three outputs and
``SoftmaxV2`` (declared in CANN's ``nn_norm_ops.h``); batch norm belongs here."""

from __future__ import annotations

import torch

from ge_executor.registry import FLOATS, RAW_OPS, OpView, input_ints, kernel


@kernel("LayerNormV4", dtypes=FLOATS,
        source=f"{RAW_OPS}:89026 REG_OP(LayerNormV4) (T1 = float, float16, bf16 per CANN's LayerNormV4 docs)")
def layer_norm_v4(op: OpView, inputs: list[torch.Tensor | None]) -> tuple[torch.Tensor, ...]:
    """y, mean, rstd over the trailing ``normalized_shape`` dims (mean/rstd keep those dims as 1, in float32 for
    half inputs as CANN computes them), ``epsilon`` default 1e-5; gamma/beta optional."""
    x = inputs[0]
    normalized = input_ints(inputs[1], op, "normalized_shape")
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
