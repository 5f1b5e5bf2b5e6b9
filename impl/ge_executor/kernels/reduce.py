"""EX-11, IMPL-4: GE reduction kernels (CANN semantics): ``ReduceSum``, ``ReduceMean``, ``ReduceMax``; the axes are
an input tensor, ``keep_dims`` an attr. And the cumulative sum ``Cumsum`` (axis an input, ``exclusive`` and
``reverse`` attrs), ``TopKV2``, the k largest or smallest along the last dimension, ``Sort`` along the last dimension,
and ``Histogram``, counts in equal-width bins."""

from __future__ import annotations

import torch

from ge_executor.registry import BASIC, METADEF, RAW_OPS, REAL, OpView, input_ints, kernel, required


@kernel("ReduceSum", dtypes=BASIC, source=f"{RAW_OPS}:70031 REG_OP(ReduceSum), NumberType() ({METADEF})")
def reduce_sum(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """Sum over ``axes`` (attr ``keep_dims``), in the input's dtype; empty axes: the input itself (ONNX-style
    ``noop_with_empty_axes``, which ReduceSum's registration does not have: GE reduces nothing then)."""
    x, axes = required(op, inputs, 0), [int(a) for a in required(op, inputs, 1).reshape(-1).tolist()]
    if not axes:
        return x.clone()
    return x.sum(dim=axes, keepdim=op.b("keep_dims", False)).to(x.dtype)


@kernel("ReduceMean", dtypes=BASIC, source=f"{RAW_OPS}:70332 REG_OP(ReduceMean), NumberType() ({METADEF})")
def reduce_mean(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """Mean over ``axes`` (attr ``keep_dims``); empty axes: x itself when ``noop_with_empty_axes``, else all."""
    x, axes = required(op, inputs, 0), [int(a) for a in required(op, inputs, 1).reshape(-1).tolist()]
    if not axes:
        return x.clone() if op.b("noop_with_empty_axes", True) else x.mean().to(x.dtype)
    return x.mean(dim=axes, keepdim=op.b("keep_dims", False))


@kernel("ReduceMax", dtypes=BASIC - {"DT_COMPLEX64", "DT_COMPLEX128"},
        source=f"{RAW_OPS}:70423 REG_OP(ReduceMax), NumberType() ({METADEF}; complex has no order)")
def reduce_max(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """Max over ``axes`` (attr ``keep_dims``), in the input's dtype; empty axes: the input itself (no
    ``noop_with_empty_axes`` in its registration, as ReduceSum). A max over an axis of size 0 has no value; CANN
    documents none for it, so it is refused rather than invented (torch raises there too)."""
    x, axes = required(op, inputs, 0), [int(a) for a in required(op, inputs, 1).reshape(-1).tolist()]
    if not axes:
        return x.clone()
    if any(x.shape[a] == 0 for a in axes if -x.dim() <= a < x.dim()):
        raise op.fail(f"reduces axes {axes} of shape {list(x.shape)}, one of size 0: a max of no element is "
                      "undefined")
    return x.amax(dim=axes, keepdim=op.b("keep_dims", False))


@kernel("Cumsum", dtypes=BASIC, source=f"{RAW_OPS}:77988 REG_OP(Cumsum), NumberType() ({METADEF})")
def cumsum(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """Running sums of x along the 0-d ``axis`` input, in x's dtype: y[i] = x[0] + ... + x[i]; ``exclusive`` leaves
    x[i] out (y[0] = 0), ``reverse`` sums from the end."""
    x = required(op, inputs, 0)
    (axis,) = input_ints(inputs[1], op, "axis")
    if not -max(x.dim(), 1) <= axis < max(x.dim(), 1):
        raise op.fail(f"axis {axis} is out of range for a {x.dim()}-d input")
    work = x.flip(axis) if op.b("reverse", False) else x
    y = torch.cumsum(work, dim=axis, dtype=x.dtype)
    if op.b("exclusive", False):
        y = y - work
    return y.flip(axis) if op.b("reverse", False) else y


@kernel("TopKV2", dtypes=REAL, source=f"{RAW_OPS}:77413 REG_OP(TopKV2), RealNumberType() ({METADEF}); k and indices "
                                     "DT_INT32; CANN selection_ops.h: over the last dimension, of size at least k")
def top_k_v2(op: OpView, inputs: list[torch.Tensor | None]) -> tuple[torch.Tensor, torch.Tensor]:
    """The ``k`` largest elements along the last dimension (the smallest with ``largest`` false), in descending
    (ascending) order with ``sorted``, and their int32 indices. CANN documents the op over the last dimension and
    ``dim`` as reserved, so another ``dim`` is refused, as is a ``k`` outside [0, that dimension's size]."""
    x, k_tensor = required(op, inputs, 0), required(op, inputs, 1)
    if k_tensor.dtype != torch.int32 or k_tensor.dim() != 0:
        raise op.fail(f"k is a {k_tensor.dim()}-d {k_tensor.dtype} tensor; TopKV2 takes a 0-d int32 k")
    dim, k, size = op.i("dim", -1), int(k_tensor), x.shape[-1] if x.dim() else 1
    if x.dim() == 0 or dim not in (-1, x.dim() - 1):
        raise op.fail(f"dim={dim} on a {x.dim()}-d input: TopKV2 works along the last dimension")
    if not 0 <= k <= size:
        raise op.fail(f"k={k} for a last dimension of size {size}")
    keys = _ordered(x)
    values, indices = torch.topk(keys, k, dim=-1, largest=op.b("largest", True), sorted=op.b("sorted", True))
    if x.dtype == torch.uint64:
        values = torch.gather(x.view(torch.int64), -1, indices).view(torch.uint64)
    elif keys is not x:
        values = values.to(x.dtype)
    return values, indices.to(torch.int32)


def _ordered(x: torch.Tensor) -> torch.Tensor:
    """x itself, or for an unsigned type torch's topk does not take, signed keys in the same order (uint16 and
    uint32 widened to int64; uint64's bits with the top one flipped, read as int64)."""
    if x.dtype in (torch.uint16, torch.uint32):
        return x.to(torch.int64)
    if x.dtype == torch.uint64:
        return x.view(torch.int64) ^ torch.iinfo(torch.int64).min
    return x


_SORT = {"DT_FLOAT16", "DT_FLOAT", "DT_INT16", "DT_INT8", "DT_UINT8", "DT_INT32", "DT_INT64"}


@kernel("Sort", dtypes=_SORT, source=f"{RAW_OPS}:47570 REG_OP(Sort)")
def sort(op: OpView, inputs: list[torch.Tensor | None]) -> tuple[torch.Tensor, torch.Tensor]:
    """x sorted along the last dimension (ascending, or descending with attr ``descending``) and the int32 positions
    the values came from (``y2``); attr ``stable`` keeps equal elements in their order, without it their order is
    unspecified (this kernel gives torch's). CANN's Sort works along the last dimension only (its ``axis`` attr names
    it; the Ascend backend sorts no other), so another ``axis`` is refused."""
    x = required(op, inputs, 0)
    axis = op.i("axis", -1)
    if axis not in (-1, max(x.dim() - 1, 0)):
        raise op.fail(f"axis={axis} on a {x.dim()}-d input: Sort works along the last dimension")
    values, indices = torch.sort(x, dim=-1, descending=op.b("descending", False), stable=op.b("stable", False))
    return values, indices.to(torch.int32)


@kernel("Histogram", dtypes={"DT_FLOAT16", "DT_FLOAT", "DT_INT32"}, source=f"{RAW_OPS}:34897 REG_OP(Histogram)")
def histogram(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """Counts of x's elements in attr ``bins`` equal-width bins over [``min``, ``max``] (the max in the last bin,
    elements outside ignored; min and max both 0: the data's own range), float32 (int32 for an int32 x), as
    ``torch.histc`` counts. Refused where CANN documents no result: ``bins`` < 1, ``min`` > ``max``, ``min`` equal to
    a nonzero ``max``, and a data range of one value or none (an empty x) when both are 0."""
    x, bins = required(op, inputs, 0), op.i("bins", 100)
    low, high = op.f("min", 0.0), op.f("max", 0.0)
    if bins < 1 or low > high or (low == high != 0):
        raise op.fail(f"bins={bins}, min={low}, max={high}: CANN needs bins >= 1 and min < max (or both 0)")
    work = x.double() if x.dtype == torch.int32 else x.float()
    if low == high == 0:
        if work.numel() == 0 or bool(work.min() == work.max()):
            raise op.fail(f"min and max are 0 and the data's range is {'empty' if not work.numel() else 'one value'}")
        low, high = float(work.min()), float(work.max())
    counts = torch.histc(work, bins=bins, min=low, max=high)
    return counts.to(torch.int32 if x.dtype == torch.int32 else torch.float32)
