"""EX-11, IMPL-4: GE pooling kernels (CANN semantics): ``MaxPoolWithArgmaxV1`` on NCHW data, its window attrs in the
four-entry form its REG_OP documents (``ksize`` [1, kh, kw, 1], ``strides`` [1, sh, sw, 1], ``pads`` [1, ph, pw,
1], ``dilation`` [1, dh, dw, 1])."""

from __future__ import annotations

import torch

from ge_executor.registry import RAW_OPS, OpView, kernel, required

#: CANN's operator specification of MaxPoolWithArgmaxV1 (nn_pooling_ops.h): the argmax output "type: uint16, int32.
#: Format NCHW can only support int32 ... when the dtype of argmax is int32, argmax must be index"; "compatible with
#: the PyTorch operator max_pool2d_with_indices"
_SPEC = "CANN MaxPoolWithArgmaxV1 operator specification (nn_pooling_ops.h)"


def _window(op: OpView, key: str, low: int, default: list[int] | None = None) -> tuple[int, int]:
    values = op.ints(key, default)
    if len(values) != 4 or min(values[1:3]) < low:
        raise op.fail(f"{key} must be [1, h, w, 1] with h, w >= {low}, got {values}")
    return values[1], values[2]


@kernel("MaxPoolWithArgmaxV1", dtypes={"DT_FLOAT16", "DT_FLOAT"},
        source=f"{RAW_OPS}:56106 REG_OP(MaxPoolWithArgmaxV1) (x: DT_FLOAT16, DT_FLOAT32); {_SPEC}")
def max_pool_with_argmax_v1(op: OpView, inputs: list[torch.Tensor | None]) -> tuple[torch.Tensor, torch.Tensor]:
    """y: the maximum of each kh x kw window (stride sh, sw; dilation dh, dw) of x (N, C, H, W) padded by ph, pw
    rows and columns that never win, output sizes rounded down (up with ``ceil_mode``); argmax: where each maximum
    is, as an int32 index into its (H, W) plane, what attr ``dtype`` 3 (DT_INT32, the default) selects for NCHW.
    Another ``dtype`` (the uint16 mask layout of NC1HWC0 data) is refused."""
    x = required(op, inputs, 0)
    if x.dim() != 4:
        raise op.fail(f"x must be 4-d (NCHW), got shape {list(x.shape)}")
    if op.i("dtype", 3) != 3:
        raise op.fail(f"dtype {op.i('dtype', 3)}: only 3 (an int32 index, CANN's form for NCHW) is supported here")
    kernel_size, stride = _window(op, "ksize", 1), _window(op, "strides", 1)
    padding, dilation = _window(op, "pads", 0), _window(op, "dilation", 1, [1, 1, 1, 1])
    if any(2 * p > k for p, k in zip(padding, kernel_size)):
        raise op.fail(f"pads {list(padding)} exceed half the window {list(kernel_size)} (the spec's limit)")
    y, index = torch.nn.functional.max_pool2d(x.float(), kernel_size, stride, padding, dilation,
                                              ceil_mode=op.b("ceil_mode", False), return_indices=True)
    return y.to(x.dtype), index.to(torch.int32)
