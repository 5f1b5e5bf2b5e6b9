"""EX-11, IMPL-4: GE reduction kernels (CANN semantics): ``ReduceSum``, ``ReduceMean``, ``ReduceMax``; the axes are
an input tensor, ``keep_dims`` an attr."""

from __future__ import annotations

import torch

from ge_executor.registry import BASIC, METADEF, RAW_OPS, OpView, kernel


@kernel("ReduceSum", dtypes=BASIC, source=f"{RAW_OPS}:70031 REG_OP(ReduceSum), NumberType() ({METADEF})")
def reduce_sum(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """Sum over ``axes`` (attr ``keep_dims``), in the input's dtype; empty axes: the input itself (ONNX-style
    ``noop_with_empty_axes``, which ReduceSum's registration does not have: GE reduces nothing then)."""
    x, axes = inputs[0], [int(a) for a in inputs[1].reshape(-1).tolist()]
    if not axes:
        return x.clone()
    return x.sum(dim=axes, keepdim=op.b("keep_dims", False)).to(x.dtype)


@kernel("ReduceMean", dtypes=BASIC, source=f"{RAW_OPS}:70332 REG_OP(ReduceMean), NumberType() ({METADEF})")
def reduce_mean(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """Mean over ``axes`` (attr ``keep_dims``); empty axes: x itself when ``noop_with_empty_axes``, else all."""
    x, axes = inputs[0], [int(a) for a in inputs[1].reshape(-1).tolist()]
    if not axes:
        return x.clone() if op.b("noop_with_empty_axes", True) else x.mean().to(x.dtype)
    return x.mean(dim=axes, keepdim=op.b("keep_dims", False))


@kernel("ReduceMax", dtypes=BASIC - {"DT_COMPLEX64", "DT_COMPLEX128"},
        source=f"{RAW_OPS}:70423 REG_OP(ReduceMax), NumberType() ({METADEF}; complex has no order)")
def reduce_max(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """Max over ``axes`` (attr ``keep_dims``), in the input's dtype; empty axes: the input itself (no
    ``noop_with_empty_axes`` in its registration, as ReduceSum). A max over an axis of size 0 has no value; CANN
    documents none for it, so it is refused rather than invented (torch raises there too)."""
    x, axes = inputs[0], [int(a) for a in inputs[1].reshape(-1).tolist()]
    if not axes:
        return x.clone()
    if any(x.shape[a] == 0 for a in axes if -x.dim() <= a < x.dim()):
        raise op.fail(f"reduces axes {axes} of shape {list(x.shape)}, one of size 0: a max of no element is "
                      "undefined")
    return x.amax(dim=axes, keepdim=op.b("keep_dims", False))
