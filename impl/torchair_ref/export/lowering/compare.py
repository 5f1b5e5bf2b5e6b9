"""EX-7 lowerings of comparisons, logic and selection by a condition.

Each follows the converter of the same name in the wheel's ``ge_converter/aten/`` (cited per function, as
``<file>:<lines>``): the operands are brought to one dtype the way that converter does (comparisons differ from one
another there, and the reference keeps each one's rule), then one GE op.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..op_builder import Builder, Value
from .common import out, scalar_dtype, traced, unsupported

aten = torch.ops.aten

# le.py:4-34 (check_support_dtype): the dtypes aten.le's converter accepts
_LE_DTYPES = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
              torch.bfloat16, torch.float32, torch.float64)


def _dtype_of(value: Any) -> torch.dtype:
    return value.dtype if isinstance(value, Value) else scalar_dtype(value)


def le(b: Builder, node: Any, x: Value, y: Any) -> Value:
    """``le.Tensor``/``le.Scalar`` -> ``LessEqual`` (le.py:38-48 and 59-72): operands of two dtypes promoted to
    the higher one (a Python number counts as int64 or float32), two bool operands compared as float32; a dtype
    outside the converter's list refused, as there."""
    dtypes = (x.dtype, _dtype_of(y))
    if any(d not in _LE_DTYPES for d in dtypes):
        raise unsupported(node, f"with dtypes {dtypes} (upstream's converter accepts {_LE_DTYPES})")
    common = torch.promote_types(*dtypes) if dtypes[0] != dtypes[1] else dtypes[0]
    if common == torch.bool:
        common = torch.float32
    dtype, shape = out(node)
    return b.one("LessEqual", [("x1", b.promote(x, common)), ("x2", b.promote(y, common))], dtype, shape)


def lt_scalar(b: Builder, node: Any, x: Value, y: Any) -> Value:
    """``lt.Scalar`` -> ``Less(x, Cast(y, x's dtype))`` (lt.py:14-17): the number a ``Const`` of its own type, cast
    to x's."""
    if isinstance(y, Value):
        other = b.cast(y, x.dtype)
    else:
        other = b.cast(b.const(y, scalar_dtype(y)), x.dtype)
    dtype, shape = out(node)
    return b.one("Less", [("x1", x), ("x2", other)], dtype, shape)


def gt(b: Builder, node: Any, x: Value, y: Any) -> Value:
    """``gt.Tensor``/``gt.Scalar`` -> ``Greater`` (gt.py:4-10, 21-26 and 37-42): both operands in
    ``torch.result_type`` of the traced operands (bool compared as float32)."""
    common = torch.result_type(traced(node.args[0]), traced(node.args[1]))
    if common == torch.bool:
        common = torch.float32
    dtype, shape = out(node)
    return b.one("Greater", [("x1", b.promote(x, common)), ("x2", b.promote(y, common))], dtype, shape)


def ne(b: Builder, node: Any, x: Value, y: Any) -> Value:
    """``ne.Tensor``/``ne.Scalar`` -> ``NotEqual``: both operands in ``torch.result_type`` of the traced operands
    (ne.py:19-23, 32-37 and 46-51; unlike ``gt``, bool stays bool, which ``NotEqual``'s registration does not take)."""
    common = torch.result_type(traced(node.args[0]), traced(node.args[1]))
    dtype, shape = out(node)
    return b.one("NotEqual", [("x1", b.promote(x, common)), ("x2", b.promote(y, common))], dtype, shape)


def ge_scalar(b: Builder, node: Any, x: Value, y: Any) -> Value:
    """``ge.Scalar`` -> ``GreaterEqual(x, y in x's dtype)`` (ge.py:66-69)."""
    dtype, shape = out(node)
    return b.one("GreaterEqual", [("x1", x), ("x2", b.promote(y, x.dtype))], dtype, shape)


def bitwise_and(b: Builder, node: Any, x: Value, y: Any) -> Value:
    """``bitwise_and.Tensor`` -> ``LogicalAnd`` for bool, else ``BitwiseAnd``, operands in the output dtype
    (bitwise_and.py:11-18)."""
    dtype, shape = out(node)
    if dtype == torch.bool:
        return b.one("LogicalAnd", [("x1", b.promote(x, dtype)), ("x2", b.promote(y, dtype))], dtype, shape)
    return b.one("BitwiseAnd", [("x1", b.promote(x, dtype)), ("x2", b.promote(y, dtype))], dtype, shape)


def bitwise_not(b: Builder, node: Any, x: Value) -> Value:
    """``bitwise_not`` -> ``LogicalNot`` for bool, else ``Invert`` (bitwise_not.py:11-17)."""
    dtype, shape = out(node)
    if x.dtype == torch.bool:
        return b.one("LogicalNot", [("x", x)], dtype, shape)
    return b.one("Invert", [("x", x)], dtype, shape)


def where(b: Builder, node: Any, condition: Value, x: Value, y: Value) -> Value:
    """``where.self`` -> ``SelectV2(condition, then, else)``; branches of two dtypes promoted to the output dtype
    first (where.py:12-16)."""
    dtype, shape = out(node)
    if x.dtype != y.dtype:
        x, y = b.promote(x, dtype), b.promote(y, dtype)
    return b.one("SelectV2", [("condition", condition), ("then", x), ("else", y)], dtype, shape)


def masked_fill(b: Builder, node: Any, x: Value, mask: Value, value: Any) -> Value:
    """``masked_fill.Scalar`` -> ``MaskedFill(x, mask, value in the output dtype)`` (masked_fill.py:12-17)."""
    dtype, shape = out(node)
    return b.one("MaskedFill", [("x", x), ("mask", mask), ("value", b.promote(value, dtype))], dtype, shape)


TABLE: dict[Any, Callable[..., Any]] = {
    aten.le.Tensor: le,
    aten.le.Scalar: le,
    aten.lt.Scalar: lt_scalar,
    aten.gt.Tensor: gt,
    aten.gt.Scalar: gt,
    aten.ge.Scalar: ge_scalar,
    aten.ne.Tensor: ne,
    aten.ne.Scalar: ne,
    aten.bitwise_and.Tensor: bitwise_and,
    aten.bitwise_not.default: bitwise_not,
    aten.where.self: where,
    aten.masked_fill.Scalar: masked_fill,
}
