"""EX-11, IMPL-4: GE normalisation kernels (CANN semantics): ``LayerNormV4`` with its three outputs, ``SoftmaxV2``
(declared in CANN's ``nn_norm_ops.h``) and inference batch norm ``BNInfer``."""

from __future__ import annotations

import torch

from ge_executor.registry import FLOATS, RAW_OPS, OpView, input_ints, kernel, required


@kernel("LayerNormV4", dtypes=FLOATS,
        source=f"{RAW_OPS}:89026 REG_OP(LayerNormV4) (T1 = float, float16, bf16 per CANN's LayerNormV4 docs)")
def layer_norm_v4(op: OpView, inputs: list[torch.Tensor | None]) -> tuple[torch.Tensor, ...]:
    """y, mean, rstd over the trailing ``normalized_shape`` dims (mean/rstd keep those dims as 1, in float32 for
    half inputs as CANN computes them), ``epsilon`` default 1e-5; gamma/beta optional."""
    x = required(op, inputs, 0)
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
    x = required(op, inputs, 0)
    axes = op.ints("axes", [-1])
    out_dtype = torch.float32 if op.b("half_to_float", False) and x.dtype == torch.float16 else x.dtype
    work = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    shifted = work - work.amax(dim=axes, keepdim=True)
    exp = shifted.exp()
    return (exp / exp.sum(dim=axes, keepdim=True)).to(out_dtype)


@kernel("BNInfer", dtypes={"DT_FLOAT16", "DT_FLOAT"},
        source=f"{RAW_OPS}:69668 REG_OP(BNInfer) (scale, offset, mean, variance: DT_FLOAT)")
def bn_infer(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """Inference batch norm over the channel dim 1 (NCHW, as upstream's converter lays x out):
    scale * (x - mean) / sqrt(variance + ``epsilon``) + offset, each of scale, offset, mean, variance one value per
    channel, computed in float32 and returned in x's dtype. ``epsilon`` is required (REQUIRED_ATTR)."""
    _, scale, offset, mean, variance = inputs[:5]
    if scale is None or offset is None or mean is None or variance is None:
        raise op.fail("scale, offset, mean and variance are required inputs")
    x = required(op, inputs, 0)
    if x.dim() < 2:
        raise op.fail(f"x must have a channel dim 1, got shape {list(x.shape)}")
    channels = x.shape[1]
    for name, t in (("scale", scale), ("offset", offset), ("mean", mean), ("variance", variance)):
        if t.dtype != torch.float32:
            raise op.fail(f"{name} must be DT_FLOAT (its REG_OP type), got {t.dtype}")
        if t.numel() != channels:
            raise op.fail(f"{name} has {t.numel()} values for {channels} channels")
    view = [1, channels] + [1] * (x.dim() - 2)
    wide = x.float()
    y = (wide - mean.reshape(view)) / torch.sqrt(variance.reshape(view) + op.f("epsilon"))
    return (y * scale.reshape(view) + offset.reshape(view)).to(x.dtype)
