"""EX-7 lowerings of arithmetic, matrix products, activations, normalisation and casts.

Each follows the converter of the same name in the wheel's ``ge_converter/aten/`` (``add.py``, ``sub.py``,
``mul.py``, ``div.py``, ``minimum.py``, ``addmm.py``, ``mm.py``, ``bmm.py``, ``gelu.py``, ``native_layer_norm.py``,
``mean.py``, ``pow.py``, ``_to_copy.py``, ``prims/convert_element_type.py``, ``builtin_converters.py``; the
one-op element-wise ones are listed in ``TABLE`` with theirs): operands are promoted to the output dtype first (a
``Cast``, or a 0-d ``Const`` for a Python number), as upstream's ``dtype_promote`` does. Where upstream casts an
op's result to the dtype it already has, no ``Cast`` is written. Departures: ``gelu`` (see ``gelu``) and
``true_divide.Tensor`` (upstream's converter only raises; see ``TABLE``).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import torch

from ..op_builder import Builder, Value
from .common import out, unsupported

aten = torch.ops.aten
_HALF = (torch.float16, torch.bfloat16)


def _binary(ge_type: str) -> Callable[..., Any]:
    def lower(b: Builder, node: Any, x: Any, y: Any) -> Any:
        if not isinstance(x, Value) and not isinstance(y, Value):  # two plain numbers: Python computes it
            return node.meta["val"]
        dtype, shape = out(node)
        return b.one(ge_type, [("x1", b.promote(x, dtype)), ("x2", b.promote(y, dtype))], dtype, shape)

    return lower


def add(b: Builder, node: Any, x: Value, y: Any, *, alpha: Any = 1) -> Any:
    """``add.Tensor`` -> ``Add``; ``alpha != 1`` would be ``AxpyV2``, which the zoo never needs."""
    if alpha != 1:
        raise unsupported(node, f"with alpha={alpha!r} (upstream: AxpyV2)")
    return _binary("Add")(b, node, x, y)


def sub(b: Builder, node: Any, x: Value, y: Any, *, alpha: Any = 1) -> Any:
    """``sub.Tensor`` -> ``Sub`` of the operands in the output dtype; ``alpha != 1`` first multiplies y by a
    ``Const`` alpha of y's dtype (``Mul``), as sub.py:14-22 does."""
    if alpha != 1:
        y = b.one("Mul", [("x1", y), ("x2", b.const(alpha, y.dtype))], y.dtype, y.shape) if isinstance(y, Value) \
            else y * alpha
    return _binary("Sub")(b, node, x, y)


def div(b: Builder, node: Any, x: Any, y: Any) -> Any:
    """``div.Tensor`` -> ``RealDiv`` of the operands in the output dtype (div.py:15-18): true division, integer
    operands having been promoted to the float output dtype."""
    return _binary("RealDiv")(b, node, x, y)


def minimum(b: Builder, node: Any, x: Value, y: Value) -> Value:
    """``minimum`` -> ``Minimum`` in the output dtype (minimum.py:19-28): ``Mul`` for bool (logical and); uint8
    and int16, which ``Minimum``'s registration lacks, computed in int32 and cast back."""
    dtype, shape = out(node)
    if dtype == torch.bool:
        return b.one("Mul", [("x1", x), ("x2", y)], dtype, shape)
    compute = torch.int32 if dtype in (torch.uint8, torch.int16) else dtype
    result = b.one("Minimum", [("x1", b.promote(x, compute)), ("x2", b.promote(y, compute))], compute, shape)
    return b.cast(result, dtype)


def abs_(b: Builder, node: Any, x: Value) -> Value:
    """``abs`` -> ``Abs``; a uint8 tensor is its own absolute value (abs.py:10-14)."""
    if x.dtype == torch.uint8:
        return x
    dtype, shape = out(node)
    return b.one("Abs", [("x", x)], dtype, shape)


def mul(b: Builder, node: Any, x: Any, y: Any) -> Value:
    """``mul.Tensor`` -> ``Mul`` (``Muls`` with attr ``value`` for a float16 tensor times a number), mul.py:29-44.

    Departure: upstream writes ``Muls`` for a bfloat16 tensor times a number too (mul.py:35), but ``Muls``'s
    registration in the same wheel has no DT_BF16 (auto_generated_ge_raw_ops.py:15375; later CANN releases add it,
    ops-math ``muls_proto.h``), so the reference writes ``Mul`` by a bfloat16 ``Const`` there, which every
    registration of ``Mul`` takes."""
    dtype, shape = out(node)
    if isinstance(x, Value) and not isinstance(y, Value) and x.dtype == torch.float16:
        return b.cast(b.one("Muls", [("x", x)], x.dtype, shape, {"value": float(y)}), dtype)
    both_bool = isinstance(x, Value) and isinstance(y, Value) and x.dtype == y.dtype == torch.bool
    compute = torch.uint8 if both_bool else dtype
    product = b.one("Mul", [("x1", b.promote(x, compute)), ("x2", b.promote(y, compute))], compute, shape)
    return b.cast(product, dtype)


def baddbmm(b: Builder, node: Any, x: Value, batch1: Value, batch2: Value, *, beta: Any = 1, alpha: Any = 1
            ) -> Value:
    """``baddbmm`` -> ``Add(Mul(BatchMatMul(batch1, batch2), alpha), Mul(x, beta))`` in the output dtype
    (baddbmm.py:22-28; as there, ``x`` is multiplied by ``beta`` even when it is 0). Departure: ``alpha`` and
    ``beta`` are ``Const``s of the operand's dtype, where upstream's number conversion makes an int one int64 (the
    same product: ``Mul`` computes in the promoted type)."""
    dtype, shape = out(node)
    product = b.one("BatchMatMul", [("x1", batch1), ("x2", batch2)], batch1.dtype, shape,
                    {"adj_x1": False, "adj_x2": False})
    scaled = b.one("Mul", [("x1", product), ("x2", b.promote(alpha, product.dtype))], product.dtype, shape)
    bias = b.one("Mul", [("x1", x), ("x2", b.promote(beta, x.dtype))], x.dtype, x.shape)
    return b.one("Add", [("x1", b.promote(scaled, dtype)), ("x2", b.promote(bias, dtype))], dtype, shape)


def _matmul_v2(b: Builder, x1: Value, x2: Value, bias: Value | None, dtype: Any, shape: Any) -> Value:
    return b.one("MatMulV2", [("x1", x1), ("x2", x2), ("bias", bias), ("offset_w", None)], dtype, shape,
                 {"transpose_x1": False, "transpose_x2": False, "offset_x": 0})


def addmm(b: Builder, node: Any, bias: Value, mat1: Value, mat2: Value, *, beta: Any = 1, alpha: Any = 1) -> Value:
    """``addmm`` -> ``MatMulV2(mat1, mat2)``, ``Mul`` by alpha, ``Add`` of the bias; for a float16/bfloat16 bias of
    one row, the bias is ``MatMulV2``'s third input instead (upstream's ``is_need_to_convert_bias``)."""
    dtype, shape = out(node)
    mat1, mat2, bias = (b.promote(v, dtype) for v in (mat1, mat2, bias))
    if float(alpha) == 0.0 or float(beta) not in (0.0, 1.0):
        raise unsupported(node, f"with alpha={alpha!r}, beta={beta!r} (upstream: Mul or AxpyV2 of the bias)")
    one_row = bias.rank == 1 or (bias.rank == 2 and bias.shape[0] == 1 and bias.shape[1] == mat2.shape[1])
    if dtype in _HALF and one_row and float(beta) == 1.0:
        if float(alpha) != 1.0:
            mat1 = b.one("Mul", [("x1", mat1), ("x2", b.const(alpha, dtype))], dtype, mat1.shape)
        return _matmul_v2(b, mat1, mat2, bias, dtype, shape)
    product = _matmul_v2(b, mat1, mat2, None, dtype, shape)
    product = b.one("Mul", [("x1", product), ("x2", b.const(alpha, dtype))], dtype, shape)
    if float(beta) == 0.0:
        return product
    return b.one("Add", [("x1", product), ("x2", bias)], dtype, shape)


def mm(b: Builder, node: Any, x1: Value, x2: Value) -> Value:
    """``mm`` -> ``MatMul(x1, x2, bias omitted)``."""
    if torch.int8 in (x1.dtype, x2.dtype):
        raise unsupported(node, "of int8 tensors")
    dtype, shape = out(node)
    return b.one("MatMul", [("x1", x1), ("x2", x2), ("bias", None)], dtype, shape,
                 {"transpose_x1": False, "transpose_x2": False})


def bmm(b: Builder, node: Any, x1: Value, x2: Value) -> Value:
    """``bmm`` -> ``BatchMatMul(x1, x2)`` in the output dtype, attrs ``adj_x1``/``adj_x2`` false (bmm.py:10-15;
    int8 refused there too)."""
    if torch.int8 in (x1.dtype, x2.dtype):
        raise unsupported(node, "of int8 tensors")
    dtype, shape = out(node)
    return b.one("BatchMatMul", [("x1", b.promote(x1, dtype)), ("x2", b.promote(x2, dtype))], dtype, shape,
                 {"adj_x1": False, "adj_x2": False})


def _unary(ge_type: str, *, promote: bool = False, **attrs: Any) -> Any:
    def lower(b: Builder, node: Any, x: Value, **_ignored: Any) -> Value:
        dtype, shape = out(node)
        return b.one(ge_type, [("x", b.promote(x, dtype) if promote else x)], dtype, shape, dict(attrs))

    return lower


def gelu(b: Builder, node: Any, x: Value, *, approximate: str = "none") -> Value:
    """``gelu`` -> ``GeluV2`` with attr ``approximate`` as given. Upstream's converter writes ``Gelu`` and drops
    ``approximate`` (gelu.py); CANN's ``Gelu`` is the tanh form, so it computes erf-GELU (torch's default) only
    approximately, while ``GeluV2`` computes either exactly (CANN aclnnGeluQuant: approximate none | tanh)."""
    dtype, shape = out(node)
    return b.one("GeluV2", [("x", x)], dtype, shape, {"approximate": approximate})


def layer_norm(b: Builder, node: Any, x: Value, normalized_shape: Any, weight: Value | None, bias: Value | None,
               eps: float) -> list[Value]:
    """``native_layer_norm`` -> ``LayerNormV4(x, normalized_shape, gamma, beta)``, attr ``epsilon``; a missing
    weight or bias is a ``Const`` of ones or zeros (upstream's ``_fill_if_none``)."""
    if weight is None:
        weight = b.const(torch.ones(list(normalized_shape)), x.dtype)
    if bias is None:
        bias = b.const(torch.zeros(list(normalized_shape)), x.dtype)
    outputs = [out(node, k) for k in range(3)]
    return b.op("LayerNormV4", [("x", x), ("normalized_shape", b.int_list(normalized_shape)), ("gamma", weight),
                                ("beta", bias)], outputs, {"epsilon": float(eps)})


def mean_dim(b: Builder, node: Any, x: Value, dim: Any, keepdim: bool = False, *, dtype: Any = None) -> Value:
    """``mean.dim`` -> ``ReduceMean(x, axes)``, attrs ``keep_dims`` and ``noop_with_empty_axes``."""
    if dtype is not None:
        raise unsupported(node, f"with dtype={dtype} (upstream: ReduceMeanWithCast)")
    out_dtype, shape = out(node)
    axes = list(dim) if dim else list(range(x.rank))
    return b.one("ReduceMean", [("x", x), ("axes", b.int_list(axes))], out_dtype, shape,
                 {"keep_dims": bool(keepdim), "noop_with_empty_axes": True})


def to_copy(b: Builder, node: Any, x: Value, *, dtype: Any = None, layout: Any = None,
            memory_format: Any = None, **_placement: Any) -> Value:
    """``_to_copy`` -> ``Cast`` (attr ``dst_type``) to a new dtype, else ``TensorMove``; device and pinning do not
    change the graph."""
    if layout not in (None, torch.strided) or memory_format not in (None, torch.contiguous_format):
        raise unsupported(node, f"with layout={layout}, memory_format={memory_format}")
    if dtype is not None and dtype != x.dtype:
        return b.cast(x, dtype)
    out_dtype, shape = out(node)
    return b.one("TensorMove", [("x", x)], out_dtype, shape)


def convert_element_type(b: Builder, node: Any, x: Value, dtype: Any) -> Value:
    """``prims.convert_element_type`` -> ``Cast``."""
    return b.cast(x, dtype)


TABLE: dict[Any, Callable[..., Any]] = {
    aten.add.Tensor: add,
    aten.sub.Tensor: sub,  # sub.py:14
    aten.mul.Tensor: mul,
    aten.mul.Scalar: _binary("Mul"),  # mul.py:53-56: both operands in the output dtype, no Muls
    aten.div.Tensor: div,  # div.py:15
    # Departure: true_divide.py:5 raises "not implemented". It is div.Tensor's true division; Dynamo writes it for a
    # float a model computes with (GPT-2's GELU: math.sqrt(2.0 / math.pi)) when dynamic=True leaves floats unspecialised
    aten.true_divide.Tensor: div,
    aten.floor_divide.default: _binary("FloorDiv"),  # floor_divide.py:19-21: both in the output dtype
    aten.minimum.default: minimum,  # minimum.py:19
    aten.abs.default: abs_,  # abs.py:10
    aten.log.default: _unary("Log", base=-1.0, scale=1.0, shift=0.0),  # log.py:10; the attrs are REG_OP's defaults
    aten.cos.default: _unary("Cos"),  # cos.py:11
    aten.sin.default: _unary("Sin"),  # sin.py:11
    aten.hardsigmoid.default: _unary("HardSigmoid", alpha=0.16666666, beta=0.5),  # hardsigmoid.py:26, defaults
    aten.hardswish.default: _unary("HardSwish"),  # hardswish.py:26
    aten.bmm.default: bmm,  # bmm.py:10
    aten.baddbmm.default: baddbmm,
    # exp.py:6-10 casts a bool x to the output dtype; the reference casts any x of another dtype (an int x too,
    # which Exp's registration, UnaryDataType, does not take)
    aten.exp.default: _unary("Exp", promote=True, base=-1.0, scale=1.0, shift=0.0),
    aten.sqrt.default: _unary("Sqrt", promote=True),  # sqrt.py:13-16: x promoted to the output dtype
    aten.maximum.default: _binary("Maximum"),  # maximum.py:6
    aten.addmm.default: addmm,
    aten.mm.default: mm,
    aten.relu.default: _unary("Relu"),
    aten.sigmoid.default: _unary("Sigmoid"),
    aten.tanh.default: _unary("Tanh"),
    aten.silu.default: _unary("Swish", scale=1.0),
    aten.gelu.default: gelu,
    aten.neg.default: _unary("Neg"),
    aten.rsqrt.default: _unary("Rsqrt"),
    aten.clone.default: _unary("Identity"),
    aten.lift_fresh_copy.default: _unary("Identity"),
    aten.pow.Tensor_Scalar: _binary("Pow"),  # pow.py:28-29: both operands in the output dtype
    aten.pow.Tensor_Tensor: _binary("Pow"),  # pow.py:13-16
    aten.native_layer_norm.default: layer_norm,
    aten.mean.dim: mean_dim,
    aten._to_copy.default: to_copy,
    torch.ops.prims.convert_element_type.default: convert_element_type,
    operator.add: _binary("Add"),
    operator.sub: _binary("Sub"),
    operator.mul: _binary("Mul"),
    operator.floordiv: _binary("FloorDiv"),  # builtin_converters.py:27-34: symbolic sizes (funcol's split sizes)
    operator.truediv: _binary("Div"),  # builtin_converters.py:37-44
}
