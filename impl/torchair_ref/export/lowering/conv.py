"""EX-7 lowerings of the vision operators: 2-d convolution (``Conv2D``), max pooling (``MaxPoolWithArgmaxV1``) and
inference batch norm (``BNInfer``), with their inputs and outputs in layout ``NCHW`` as upstream marks them.

Each follows the converter of the same name in the wheel's ``ge_converter/aten/`` (cited per function), on the path
upstream takes for Ascend A2/A3 (``is_arch35()`` false; arch35 chips take ``MaxPoolWithArgmaxV3`` and
``BatchNormV3`` instead). One departure, in ``max_pool2d_with_indices``'s indices (see there).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..op_builder import Builder, Value
from .common import layout, out, unsupported

aten = torch.ops.aten


def convolution(b: Builder, node: Any, x: Value, weight: Value, bias: Value | None, stride: list[int],
                padding: list[int], dilation: list[int], transposed: bool, output_padding: list[int],
                groups: int) -> Value:
    """``convolution`` of a 4-d (or, unsqueezed at dim 2, 3-d) input -> ``Conv2D(x, filter, bias, offset_w
    omitted)``, attrs ``strides`` [1, 1, sh, sw], ``pads`` [ph, ph, pw, pw], ``dilations`` [1, 1, dh, dw],
    ``groups``, ``data_format`` "NCHW", ``offset_x`` 0; x, filter and bias in the output dtype
    (convolution.py:282-334 and _npu_conv2d, 20-31). Transposed and 3-d convolutions are refused."""
    dtype, shape = out(node)
    if transposed:
        raise unsupported(node, "transposed (upstream: Conv2DTranspose)")
    if len(shape) not in (3, 4) or any(isinstance(v, Value) for v in [*stride, *padding, *dilation]):
        raise unsupported(node, f"with a {len(shape)}-d output or symbolic strides/padding (only 1-d and 2-d)")
    stride, padding, dilation = list(stride), list(padding), list(dilation)
    if len(padding) == 1:
        padding = padding * 3
    x, weight = b.promote(x, dtype), b.promote(weight, dtype)
    bias = None if bias is None else b.promote(bias, dtype)
    one_d = len(shape) == 3
    if one_d:
        stride, padding, dilation = [1, *stride], [0, *padding], [1, *dilation]
        x = b.one("Unsqueeze", [("x", x)], dtype, (*x.shape[:2], 1, x.shape[2]), {"axes": [2]})
        weight = b.one("Unsqueeze", [("x", weight)], dtype, (*weight.shape[:2], 1, weight.shape[2]), {"axes": [2]})
    conv_shape = (*shape[:2], 1, shape[2]) if one_d else shape
    y = b.one("Conv2D", [("x", x), ("filter", weight), ("bias", bias), ("offset_w", None)], dtype, conv_shape,
              {"strides": [1, 1, stride[0], stride[1]], "pads": [padding[0], padding[0], padding[1], padding[1]],
               "dilations": [1, 1, dilation[0], dilation[1]], "groups": groups, "data_format": "NCHW",
               "offset_x": 0})
    layout(b, "NCHW", inputs=[0, 1, 2] if bias is not None else [0, 1], outputs=[0])
    if one_d:
        return b.one("Squeeze", [("x", y)], dtype, shape, {"axis": [2]})
    return y


def _pair(values: list[int], default: list[int]) -> list[int]:
    values = list(values) or default
    return values * 2 if len(values) == 1 else values


def max_pool2d_with_indices(b: Builder, node: Any, x: Value, kernel_size: list[int], stride: Any = (),
                            padding: Any = (0,), dilation: Any = (1,), ceil_mode: bool = False) -> list[Value]:
    """``max_pool2d_with_indices`` -> ``MaxPoolWithArgmaxV1``, attrs ``ksize`` [1, kh, kw, 1], ``strides``
    [1, sh, sw, 1] (the kernel size when omitted), ``pads`` [1, ph, pw, 1], ``dilation`` [1, dh, dw, 1],
    ``ceil_mode``, ``dtype`` 3 (its default), x and the outputs in layout NCHW (max_pool2d_with_indices.py:5-64).

    Departure, in the indices only: upstream returns ``Cast(Identity(y), int64)`` as the indices
    (max_pool2d_with_indices.py:65-66), the pooled values cast to int64, which no user of the indices can want.
    The reference returns the op's own ``argmax`` output cast to int64: CANN documents it, for an NCHW input and an
    int32 ``dtype``, as the index of each maximum (MaxPoolWithArgmaxV1's operator specification: "when the dtype of
    argmax is int32, argmax must be index"; "compatible with the PyTorch operator max_pool2d_with_indices")."""
    if x.rank != 4:
        raise unsupported(node, f"of a {x.rank}-d input (only NCHW)")
    kh, kw = _pair(kernel_size, [1])
    sh, sw = _pair(stride, [kh, kw])
    ph, pw = _pair(padding, [0])
    dh, dw = _pair(dilation, [1])
    (dtype, shape), (index_dtype, _) = out(node, 0), out(node, 1)
    y, argmax = b.op("MaxPoolWithArgmaxV1", [("x", x)], [(dtype, shape), (torch.int32, shape)],
                     {"ksize": [1, kh, kw, 1], "strides": [1, sh, sw, 1], "pads": [1, ph, pw, 1], "dtype": 3,
                      "dilation": [1, dh, dw, 1], "ceil_mode": bool(ceil_mode)})
    layout(b, "NCHW", inputs=[0], outputs=[0, 1])
    return [y, b.cast(argmax, index_dtype)]


def batch_norm(b: Builder, node: Any, x: Value, weight: Value | None, bias: Value | None, running_mean: Value,
               running_var: Value, momentum: float, eps: float) -> list[Value]:
    """``_native_batch_norm_legit_no_training`` -> ``BNInfer(x, scale, offset, mean, variance)``, attr
    ``epsilon``, inputs and output in layout NCHW; a 2-d or 3-d x unsqueezed to 4-d first and squeezed after; the
    two statistics outputs ``Fill([0], 0.0)``, as upstream returns them (_native_batch_norm_legit_no_training.py:13-93,
    the non-arch35 path from line 73). A missing weight or bias (upstream fills them from a 0-d size) and a 5-d or
    larger x are refused."""
    if weight is None or bias is None:
        raise unsupported(node, "without an affine weight and bias")
    if not 2 <= x.rank <= 4:
        raise unsupported(node, f"of a {x.rank}-d input (2-d to 4-d)")
    dtype, shape = out(node, 0)
    four_d = (*x.shape, *([1] * (4 - x.rank)))
    if x.rank < 4:
        x = b.one("Unsqueeze", [("x", x)], x.dtype, four_d, {"axes": list(range(x.rank, 4))})
    y = b.one("BNInfer", [("x", x), ("scale", weight), ("offset", bias), ("mean", running_mean),
                          ("variance", running_var)], dtype, four_d, {"epsilon": float(eps)})
    layout(b, "NCHW", inputs=range(5), outputs=[0])
    if len(shape) < 4:
        y = b.one("Squeeze", [("x", y)], dtype, shape, {"axis": list(range(3, len(shape) - 1, -1))})
    zero = b.cast(b.const(0.0, torch.float32), dtype)
    empty = b.one("Fill", [("dims", b.const([0], torch.int64)), ("value", zero)], dtype, (0,))
    return [y, empty, empty]


TABLE: dict[Any, Callable[..., Any]] = {
    aten.convolution.default: convolution,
    aten.max_pool2d_with_indices.default: max_pool2d_with_indices,
    aten._native_batch_norm_legit_no_training.default: batch_norm,
}
