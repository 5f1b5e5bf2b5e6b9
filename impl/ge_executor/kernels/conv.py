"""EX-11, IMPL-4: GE convolution kernels (CANN semantics): ``Conv2D`` in the NCHW layout upstream's converter
writes (``data_format`` "NCHW"; the attrs' lists follow it: ``strides`` and ``dilations`` [1, 1, h, w], ``pads``
[top, bottom, left, right])."""

from __future__ import annotations

import torch

from ge_executor.registry import RAW_OPS, OpView, kernel, required

_CONV2D = f"{RAW_OPS}:43236 REG_OP(Conv2D) (filter: the same types; bias: DT_FLOAT16, DT_FLOAT, DT_INT32)"


def _four(op: OpView, key: str, default: list[int] | None = None) -> list[int]:
    values = op.ints(key, default)
    if len(values) != 4 or min(values) < (0 if key == "pads" else 1):
        raise op.fail(f"{key} must be 4 {'non-negative' if key == 'pads' else 'positive'} ints, got {values}")
    return values


@kernel("Conv2D", dtypes={"DT_FLOAT16", "DT_FLOAT", "DT_INT8", "DT_BF16"}, same_dtype=((0, 1),), source=_CONV2D)
def conv2d(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """The 2-d cross-correlation of x (N, C, H, W) with filter (Cout, C / groups, kh, kw), plus the optional bias
    (Cout), in x's dtype: ``strides``, ``pads``, ``dilations`` and ``groups`` (default 1) as torch's conv2d takes
    them, asymmetric pads as zero padding first. Only ``data_format`` "NCHW" (the REG_OP's default "NHWC" would
    need the filter in another layout too), and no int8 x (its ``offset_w``/``offset_x`` quantisation)."""
    x, weight = required(op, inputs, 0), required(op, inputs, 1)
    bias = inputs[2] if len(inputs) > 2 else None
    if op.s("data_format", b"NHWC").decode() != "NCHW":
        raise op.fail(f"data_format {op.s('data_format', b'NHWC').decode()!r}: only NCHW is supported here")
    if x.dtype == torch.int8 or (len(inputs) > 3 and inputs[3] is not None) or op.i("offset_x", 0):
        raise op.fail("int8 x, offset_w and offset_x (quantised convolution) are not supported here")
    if x.dim() != 4 or weight.dim() != 4:
        raise op.fail(f"x and filter must be 4-d (NCHW), got {list(x.shape)} and {list(weight.shape)}")
    strides, pads, dilations = _four(op, "strides"), _four(op, "pads"), _four(op, "dilations", [1, 1, 1, 1])
    groups = op.i("groups", 1)
    if strides[:2] != [1, 1] or dilations[:2] != [1, 1]:
        raise op.fail(f"strides {strides} and dilations {dilations} must be 1 on N and C")
    if x.shape[1] != weight.shape[1] * groups or weight.shape[0] % groups:
        raise op.fail(f"x {list(x.shape)}, filter {list(weight.shape)} and groups {groups} do not fit")
    top, bottom, left, right = pads
    if (top, left) != (bottom, right):
        x, padding = torch.nn.functional.pad(x, (left, right, top, bottom)), (0, 0)
    else:
        padding = (top, left)
    y = torch.nn.functional.conv2d(x, weight, None, tuple(strides[2:]), padding, tuple(dilations[2:]), groups)
    if bias is not None:
        if bias.numel() != y.shape[1]:
            raise op.fail(f"bias has {bias.numel()} values for {y.shape[1]} output channels")
        y = y + bias.reshape(1, -1, 1, 1).to(y.dtype)
    return y
