"""EX-7 lowerings of reductions over axes: sums (``ReduceSum``), cumulative sums (``Cumsum``), softmax
(``SoftmaxV2``; a row masked everywhere gives 0), the k largest or smallest (``TopKV2``), sorting (``Sort``) and
counting into bins (``Histogram``). ``mean.dim``
(``ReduceMean``) is in ``arith`` with the other ops the first exports needed.

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


def safe_softmax(b: Builder, node: Any, x: Value, dim: int, dtype: Any = None) -> Value:
    """``_safe_softmax`` -> ``SoftmaxV2`` of x in the output dtype, attrs ``axes`` [dim] and ``half_to_float`` false
    (_softmax.py:44-52), then 0 where a row is -inf everywhere: ``SelectV2(LessEqual(ReduceMax(x), -inf), 0, y)``.

    Departure: upstream writes ``SoftmaxV2`` alone, which gives such a row NaN (0/0) where torch gives 0 (its
    decomposition: ``torch/_decomp/decompositions.py``, ``safe_softmax``). That row is a padding token's query under a
    padding mask (left-padded batches); its NaN would reach the other tokens through the next layer's values."""
    out_dtype, shape = out(node)
    probs = b.one("SoftmaxV2", [("x", b.promote(x, out_dtype))], out_dtype, shape,
                  {"axes": [dim], "half_to_float": False})
    if not x.dtype.is_floating_point:
        return probs  # no element of an integer input is -inf
    row = tuple(1 if k == dim % len(shape) else size for k, size in enumerate(shape))
    row_max = b.one("ReduceMax", [("x", x), ("axes", b.const([dim], torch.int64))], x.dtype, row, {"keep_dims": True})
    masked = b.one("LessEqual", [("x1", row_max), ("x2", b.const(float("-inf"), x.dtype))], torch.bool, row)
    return b.one("SelectV2", [("condition", masked), ("then", b.const(0.0, out_dtype)), ("else", probs)], out_dtype,
                 shape)


def _to_last(b: Builder, x: Value, dim: int) -> tuple[Value, list[int] | None]:
    """x with ``dim`` swapped with the last dimension (``Transpose`` with an int64 perm), and that perm; x itself
    and None when ``dim`` is already the last."""
    last, axis = x.rank - 1, dim % x.rank if x.rank else 0
    if axis == last or not x.rank:
        return x, None
    perm = list(range(x.rank))
    perm[axis], perm[last] = last, axis
    return b.one("Transpose", [("x", x), ("perm", b.const(perm, torch.int64))], x.dtype,
                 tuple(x.shape[p] for p in perm)), perm


def _back(b: Builder, values: list[Value], perm: list[int] | None) -> list[Value]:
    """``values`` transposed back by ``perm`` (a swap is its own inverse), or as they are when ``perm`` is None."""
    if perm is None:
        return values
    return [b.one("Transpose", [("x", v), ("perm", b.const(perm, torch.int64))], v.dtype,
                  tuple(v.shape[p] for p in perm)) for v in values]


def topk(b: Builder, node: Any, x: Value, k: Any, dim: int = -1, largest: bool = True, sorted: bool = True
         ) -> list[Value]:
    """``topk`` -> ``TopKV2(x, k)``, attrs ``sorted``, ``dim``, ``largest`` (and ``sort_policy`` 1, which the
    wheel's op builder always writes: auto_generated_ge_raw_ops.py:77443), its int32 ``indices`` cast to the
    output's int64 (topk.py:14-15).

    Departures: ``k`` is an int32 operand, the type TopKV2's registration takes (auto_generated_ge_raw_ops.py:77415),
    where upstream's number conversion gives a float ``x`` an int64 ``k``; and a ``dim`` other than the last is
    swapped with the last around the op (``Transpose``), since CANN documents TopKV2 over the last dimension and its
    ``dim`` attr as reserved (upstream passes ``dim`` on)."""
    (dtype, shape), (index_dtype, index_shape) = out(node, 0), out(node, 1)
    x, perm = _to_last(b, x, dim)
    if perm is not None:
        shape, index_shape = tuple(shape[p] for p in perm), tuple(index_shape[p] for p in perm)
    values, indices = b.op("TopKV2", [("x", x), ("k", b.promote(k, torch.int32))],
                           [(dtype, shape), (torch.int32, index_shape)],
                           {"sorted": bool(sorted), "dim": -1 if perm is not None else dim, "largest": bool(largest),
                            "sort_policy": 1})
    return _back(b, [values, b.cast(indices, index_dtype)], perm)


def sort(b: Builder, node: Any, x: Value, dim: int = -1, descending: bool = False) -> list[Value]:
    """``sort`` -> ``Sort(x)`` along the last dimension, attrs ``axis`` (the last, as a positive number),
    ``descending`` and ``stable`` false (the wheel's op builder always writes it: auto_generated_ge_raw_ops.py:47569),
    its int32 ``y2`` cast to the output's int64 indices; another ``dim`` is swapped with the last around the op
    (``Transpose`` with an int64 perm), as sort.py:16-33 does. Equal elements may come in any order, as
    ``aten.sort.default`` (not stable) allows."""
    dtype, index_dtype = out(node, 0)[0], out(node, 1)[0]
    x, perm = _to_last(b, x, dim)
    values, indices = b.op("Sort", [("x", x)], [(dtype, x.shape), (torch.int32, x.shape)],
                           {"axis": x.rank - 1, "descending": bool(descending), "stable": False})
    return _back(b, [values, b.cast(indices, index_dtype)], perm)


def histc(b: Builder, node: Any, x: Value, bins: int = 100, min: Any = 0, max: Any = 0) -> Value:
    """``histc`` -> ``Histogram(x)``, attrs ``bins``, ``min``, ``max`` (REG_OP: auto_generated_ge_raw_ops.py:34897),
    whose float32 ``y`` is cast to the output dtype. A bfloat16 x is cast to float32 first (exactly), since the
    registration takes float16, float32 and int32 only.

    Departure: upstream has no converter for ``histc`` (the wheel registers none), so a model that counts with it
    (transformers' grouped-matmul experts, for their group offsets) was refused there. ``Histogram`` is CANN's op with
    torch's semantics (equal-width bins over [min, max], the max in the last bin, elements outside ignored, the data's
    own range when min and max are both 0). A range torch fills in but CANN documents no value for (min equal to a
    nonzero max), min above max, and a float64 x (float32 would change which bin an edge value falls in) are
    refused."""
    if x.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        raise unsupported(node, f"on a {x.dtype} input (Histogram takes float16 and float32; bfloat16 is cast)")
    low, high = float(min), float(max)
    if low > high or (low == high != 0):
        raise unsupported(node, f"with min={min!r}, max={max!r} (Histogram documents min < max, or both 0)")
    dtype, shape = out(node)
    compute = torch.float32 if x.dtype == torch.bfloat16 else x.dtype
    y = b.one("Histogram", [("x", b.cast(x, compute))], torch.float32, shape,
              {"bins": int(bins), "min": low, "max": high})
    return b.cast(y, dtype)


TABLE: dict[Any, Callable[..., Any]] = {
    aten.sum.default: sum_all,
    aten.sum.dim_IntList: sum_dims,
    aten.cumsum.default: cumsum,
    aten._softmax.default: softmax,
    aten._safe_softmax.default: safe_softmax,
    aten.topk.default: topk,
    aten.sort.default: sort,  # sort.py:13
    aten.histc.default: histc,
}
