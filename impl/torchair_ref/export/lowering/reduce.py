"""EX-7 lowerings of reductions over axes: sums (``ReduceSum``), cumulative sums (``Cumsum``) and softmax
(``SoftmaxV2``). ``mean.dim`` (``ReduceMean``) is in ``arith`` with the other ops the first exports needed.

Each follows the converter of the same name in the wheel's ``ge_converter/aten/`` (cited per function); the axes
are int64 constants, as upstream's ``TT_INDEX_NUMBER`` constants are (``ge/_ge_graph.py:1380-1384``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..op_builder import Builder, Value
from .common import out, unsupported

aten = torch.ops.aten


def _reduce_sum(b: Builder, node: Any, x: Value, axes: list[int], keepdim: bool) -> Value:
    dtype, shape = out(node)
    return b.one("ReduceSum", [("x", b.promote(x, dtype)), ("axes", b.const(axes, torch.int64))], dtype, shape,
                 {"keep_dims": bool(keepdim)})


def sum_all(b: Builder, node: Any, x: Value, *, dtype: Any = None) -> Value:
    """``sum.default`` -> ``ReduceSum(Cast(x, output dtype), every axis)`` (sum.py:69-72)."""
    return _reduce_sum(b, node, x, list(range(x.rank)), False)


def sum_dims(b: Builder, node: Any, x: Value, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Value:
    """``sum.dim_IntList`` -> ``ReduceSum(x in the output dtype, dim or every axis)``, attr ``keep_dims``
    (sum.py:43-59; upstream's ``Fill`` of zeros for an input with no elements is what ``ReduceSum`` computes too)."""
    return _reduce_sum(b, node, x, list(dim) if dim else list(range(x.rank)), keepdim)


def cumsum(b: Builder, node: Any, x: Value, dim: int, *, dtype: Any = None) -> Value:
    """``cumsum`` -> ``Cumsum(x in the output dtype, axis)``, attrs ``exclusive`` and ``reverse`` false
    (cumsum.py:16-22)."""
    out_dtype, shape = out(node)
    return b.one("Cumsum", [("x", b.promote(x, out_dtype)), ("axis", b.const(dim, torch.int64))], out_dtype, shape,
                 {"exclusive": False, "reverse": False})


def softmax(b: Builder, node: Any, x: Value, dim: int, half_to_float: bool) -> Value:
    """``_softmax`` -> ``SoftmaxV2``, attrs ``axes`` [dim] and ``half_to_float`` (_softmax.py:11-17, which refuses
    ``half_to_float`` for an input that is not float16)."""
    if half_to_float and x.dtype != torch.float16:
        raise unsupported(node, f"with half_to_float=True on a {x.dtype} input (only float16)")
    dtype, shape = out(node)
    return b.one("SoftmaxV2", [("x", x)], dtype, shape, {"axes": [dim], "half_to_float": bool(half_to_float)})


TABLE: dict[Any, Callable[..., Any]] = {
    aten.sum.default: sum_all,
    aten.sum.dim_IntList: sum_dims,
    aten.cumsum.default: cumsum,
    aten._softmax.default: softmax,
}
