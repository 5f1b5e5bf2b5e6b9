"""EX-7 lowerings of shape, layout and indexing operators, and of symbolic sizes.

Each follows the converter of the same name in the wheel's ``ge_converter/aten/`` (``view.py``, ``_unsafe_view.py``,
``alias.py``, ``t.py``, ``transpose.py``, ``permute.py``, ``unsqueeze.py``, ``squeeze.py``, ``expand.py``,
``slice.py``, ``split.py``, ``split_with_sizes.py``, ``unbind.py``, ``cat.py``, ``stack.py``, ``as_strided.py``,
``tril.py``, ``index_select.py``, ``embedding.py``, ``arange.py``, ``copy.py``, ``sym_size.py``; lines cited per
function where the converter does more than one op). Shape and index operands are
int64 (GE's index type; ``split``'s axis is int32 as upstream writes it); a list that holds a symbolic size is a
``Pack``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..op_builder import Builder, Value
from .common import GATHER_ATTRS, dim_size, out, unsupported

aten = torch.ops.aten
_INT32_MAX = 2147483647


def reshape(b: Builder, node: Any, x: Value, size: Any) -> Value:
    """``view``/``_unsafe_view`` -> ``Reshape(x, shape)``, attrs ``axis`` 0 and ``num_axes`` -1."""
    dtype, shape = out(node)
    return b.one("Reshape", [("x", x), ("shape", b.int_list(size))], dtype, shape, {"axis": 0, "num_axes": -1})


def _transpose(b: Builder, node: Any, x: Value, perm: list[int]) -> Value:
    dtype, shape = out(node)
    return b.one("Transpose", [("x", x), ("perm", b.const(perm, torch.int64))], dtype, shape)


def alias(b: Builder, node: Any, x: Value) -> Value:
    """``alias`` -> ``Reshape(x, Cast(Shape(x), int64))`` (alias.py:6-10; ``Shape`` in its default int32)."""
    dtype, shape = out(node)
    dims = b.cast(b.one("Shape", [("x", x)], torch.int32, (x.rank,), {"dtype": 3}), torch.int64)
    return b.one("Reshape", [("x", x), ("shape", dims)], dtype, shape, {"axis": 0, "num_axes": -1})


def t(b: Builder, node: Any, x: Value) -> Value:
    """``t`` -> ``Transpose(x, perm [1, 0])``; ``Identity`` below rank 2."""
    if x.rank < 2:
        dtype, shape = out(node)
        return b.one("Identity", [("x", x)], dtype, shape)
    return _transpose(b, node, x, [1, 0])


def transpose(b: Builder, node: Any, x: Value, dim0: int, dim1: int) -> Value:
    """``transpose.int`` -> ``Transpose`` with the two dims swapped in the identity permutation."""
    perm = list(range(x.rank))
    perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
    return _transpose(b, node, x, perm)


def permute(b: Builder, node: Any, x: Value, dims: list[int]) -> Value:
    """``permute`` -> ``Transpose(x, perm)``; when the permutation only moves size-1 dims, ``Squeeze`` (every
    size-1 dim) then ``Unsqueeze`` where the output has them (permute.py:17-36; a symbolic dim counts as not 1)."""
    dtype, shape = out(node)
    dims = [d + len(dims) if d < 0 else d for d in dims]
    ones = [k for k, n in enumerate(x.shape) if n == 1]
    kept = [k for k, n in enumerate(x.shape) if n != 1]
    if kept == [d for d in dims if d not in ones]:
        squeezed = b.one("Squeeze", [("x", x)], dtype, tuple(n for n in x.shape if n != 1), {"axis": []})
        return b.one("Unsqueeze", [("x", squeezed)], dtype, shape, {"axes": [k for k, n in enumerate(shape) if n == 1]})
    return _transpose(b, node, x, dims)


def squeeze_dim(b: Builder, node: Any, x: Value, dim: int) -> Value:
    """``squeeze.dim`` -> ``Squeeze`` (attr ``axis`` [dim]) of a static size-1 dim, else ``Identity`` (squeeze.py:44-52:
    torch leaves a dim of another size, or a symbolic one, in place)."""
    dtype, shape = out(node)
    if x.shape[dim] == 1:
        return b.one("Squeeze", [("x", x)], dtype, shape, {"axis": [dim]})
    return b.one("Identity", [("x", x)], dtype, shape)


def unsqueeze(b: Builder, node: Any, x: Value, dim: int) -> Value:
    """``unsqueeze`` -> ``Unsqueeze``, attr ``axes`` [dim]."""
    dtype, shape = out(node)
    return b.one("Unsqueeze", [("x", x)], dtype, shape, {"axes": [dim]})


def expand(b: Builder, node: Any, x: Value, size: Any, *, implicit: bool = False) -> Value:
    """``expand`` -> ``BroadcastTo(x, shape)``; the input itself when the shape does not change."""
    dtype, shape = out(node)
    if implicit:
        raise unsupported(node, "with implicit=True")
    if x.shape == shape and -1 not in shape:
        return x
    # -1 keeps the input's size of that dim (aligned from the last): known, or read at run time when symbolic.
    gap = len(size) - x.rank
    size = [v if isinstance(v, Value) or v != -1 else shape[k] if shape[k] != -1 else dim_size(b, x, k - gap)
            for k, v in enumerate(size)]
    return b.one("BroadcastTo", [("x", x), ("shape", b.int_list(size))], dtype, shape)


def slice_(b: Builder, node: Any, x: Value, dim: int = 0, start: Any = None, end: Any = None, step: Any = 1) -> Value:
    """``slice.Tensor`` -> ``StridedSliceV2(x, begin, end, axes, strides)``, each a 0-d int64 operand; the input
    itself when the slice keeps everything."""
    dtype, shape = out(node)
    if x.shape == shape and -1 not in shape:
        return x
    start = 0 if start is None else start
    end = _INT32_MAX if end is None or (not isinstance(end, Value) and end >= 2**63 - 1) else end
    if not isinstance(end, Value) and end > _INT32_MAX:
        raise unsupported(node, f"with end={end} beyond INT32_MAX (StridedSliceV2's limit)")
    operands = [b.promote(v, torch.int64) for v in (start, end, dim, step)]
    names = ("begin", "end", "axes", "strides")
    return b.one("StridedSliceV2", [("x", x), *zip(names, operands)], dtype, shape,
                 {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0, "shrink_axis_mask": 0})


def split(b: Builder, node: Any, x: Value, split_size: Any, dim: int = 0) -> list[Value]:
    """``split.Tensor`` -> ``SplitV(x, size_splits, split_dim)``, attr ``num_split``; the last size is -1 (the
    rest), as upstream writes it (split.py:6-18); a symbolic split size makes ``size_splits`` a ``Pack``."""
    outputs = [out(node, k) for k in range(len(node.meta["val"]))]
    if not isinstance(split_size, Value):
        split_size = int(split_size)
    sizes = b.int_list([split_size] * (len(outputs) - 1) + [-1])
    return b.op("SplitV", [("x", x), ("size_splits", sizes), ("split_dim", b.const(dim, torch.int32))], outputs,
                {"num_split": len(outputs)})


def split_with_sizes(b: Builder, node: Any, x: Value, split_sizes: list[Any], dim: int = 0) -> list[Value]:
    """``split_with_sizes`` -> ``SplitV(x, size_splits as int64, split_dim as int32)``, attr ``num_split``
    (split_with_sizes.py:13-18)."""
    outputs = [out(node, k) for k in range(len(node.meta["val"]))]
    sizes, axis = b.int_list(split_sizes), b.const(dim, torch.int32)
    return b.op("SplitV", [("x", x), ("size_splits", sizes), ("split_dim", axis)], outputs, {"num_split": len(outputs)})


def unbind(b: Builder, node: Any, x: Value, dim: int = 0) -> list[Value]:
    """``unbind.int`` -> ``Unpack``, attrs ``num`` (the number of outputs) and ``axis`` (unbind.py:6-9)."""
    outputs = [out(node, k) for k in range(len(node.meta["val"]))]
    return b.op("Unpack", [("x", x)], outputs, {"num": len(outputs), "axis": dim})


def stack(b: Builder, node: Any, tensors: list[Value], dim: int = 0) -> Value:
    """``stack`` -> ``Pack(x..., N, axis)`` (stack.py:12-14); inputs promoted to the output dtype."""
    dtype, shape = out(node)
    inputs = [(f"x{k}", b.promote(v, dtype)) for k, v in enumerate(tensors)]
    return b.one("Pack", inputs, dtype, shape, {"N": len(inputs), "axis": dim})


def as_strided(b: Builder, node: Any, x: Value, size: list[int], stride: list[int],
               storage_offset: Any = None) -> Value:
    """``as_strided`` -> ``AsStrided(x, size, stride, storage_offset)`` over x's elements in row-major order; with a
    last stride of 256 or more, ``AsStrided`` with the dims ordered by decreasing stride and a ``Transpose`` back
    (as_strided.py:18-56). GE's tensors are dense and row-major, so the strides address x's storage only when x
    was contiguous at trace time: any other x is refused."""
    source = node.args[0].meta.get("val")
    if not (source.is_contiguous() and source.storage_offset() == 0):
        raise unsupported(node, "of a tensor that is not contiguous from offset 0 at trace time (GE tensors are dense)")
    dtype, shape = out(node)
    offset = b.promote(0 if storage_offset is None else storage_offset, torch.int64)
    if any(isinstance(v, Value) for v in [*size, *stride]) or stride[-1] < 256:
        return b.one("AsStrided", [("x", x), ("size", b.int_list(size)), ("stride", b.int_list(stride)),
                                   ("storage_offset", offset)], dtype, shape)
    order = sorted({(stride[k], (k, size[k])) for k in range(len(stride))}, reverse=True)
    shape_sorted = [item[1][1] for item in order]
    strided = b.one("AsStrided", [("x", x), ("size", b.int_list(shape_sorted)),
                                  ("stride", b.int_list([item[0] for item in order])), ("storage_offset", offset)],
                    dtype, tuple(shape_sorted))
    perm = [0] * len(order)
    for k, item in enumerate(order):
        perm[item[1][0]] = k
    return b.one("Transpose", [("x", strided), ("perm", b.const(perm, torch.int64))], dtype, shape)


def tril(b: Builder, node: Any, x: Value, diagonal: int = 0) -> Value:
    """``tril`` -> ``Tril``, attr ``diagonal`` (tril.py:18-20). Departure: a bool x (a causal mask built with
    ``torch.tril(torch.ones(..., dtype=bool))``) is computed as uint8 and cast back, since ``Tril``'s registration
    takes ``BasicType()``, which has no bool (auto_generated_ge_raw_ops.py:40665); upstream passes it as it is."""
    dtype, shape = out(node)
    compute = torch.uint8 if dtype == torch.bool else dtype
    y = b.one("Tril", [("x", b.cast(x, compute))], compute, shape, {"diagonal": diagonal})
    return b.cast(y, dtype)


def cat(b: Builder, node: Any, tensors: list[Value], dim: int = 0) -> Value:
    """``cat`` -> ``ConcatV2(x..., concat_dim)``, attr ``N``; inputs promoted to the output dtype."""
    dtype, shape = out(node)
    inputs = [(f"x{k}", b.promote(v, dtype)) for k, v in enumerate(tensors)]
    return b.one("ConcatV2", [*inputs, ("concat_dim", b.const(dim, torch.int64))], dtype, shape, {"N": len(inputs)})


def index_select(b: Builder, node: Any, x: Value, dim: int, index: Value) -> Value:
    """``index_select`` -> ``GatherV2(x, indices, axis)``."""
    dtype, shape = out(node)
    return b.one("GatherV2", [("x", x), ("indices", index), ("axis", b.const(dim, torch.int64))], dtype, shape,
                 dict(GATHER_ATTRS))


def embedding(b: Builder, node: Any, weight: Value, indices: Value, padding_idx: Any = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Value:
    """``embedding`` -> ``GatherV2(weight, indices, axis [0])``."""
    if scale_grad_by_freq or sparse:
        raise unsupported(node, "with scale_grad_by_freq or sparse")
    dtype, shape = out(node)
    return b.one("GatherV2", [("x", weight), ("indices", indices), ("axis", b.const([0], torch.int64))], dtype,
                 shape, dict(GATHER_ATTRS))


def arange(b: Builder, node: Any, end: Any, **_options: Any) -> Value:
    """``arange(end)`` -> ``Range(0, end, 1)`` in int32, then ``Cast`` to the output dtype."""
    return arange_start(b, node, 0, end)


def arange_start(b: Builder, node: Any, start: Any, end: Any, **_options: Any) -> Value:
    """``arange(start, end)`` -> ``Range(start, end, 1)`` in int32, then ``Cast`` to the output dtype (arange.py:
    47-49, whose step is an int32 ``Const``); bounds that are not integers, or known bounds beyond int32, are
    refused."""
    if any(isinstance(v, float) or (isinstance(v, Value) and v.dtype.is_floating_point) for v in (start, end)):
        raise unsupported(node, f"with bounds {start!r}, {end!r} that are not integers")
    if any(not isinstance(v, Value) and not -_INT32_MAX - 1 <= v <= _INT32_MAX for v in (start, end)):
        raise unsupported(node, f"with bounds {start!r}, {end!r} beyond int32 (Range computes in int32 here, and "
                                "upstream's int32 Const of such a bound fails)")
    dtype, shape = out(node)
    start, limit, delta = b.promote(start, torch.int32), b.promote(end, torch.int32), b.const(1, torch.int32)
    result = b.one("Range", [("start", start), ("limit", limit), ("delta", delta)], torch.int32, shape)
    return b.cast(result, dtype)


def copy(b: Builder, node: Any, dst: Value, src: Value, non_blocking: bool = False) -> Value:
    """``copy`` -> ``src`` in ``dst``'s dtype, ``BroadcastTo(src, Shape(dst))`` when the shapes differ."""
    src = b.promote(src, dst.dtype)
    if src.shape == dst.shape and -1 not in dst.shape:
        return src
    dtype, shape = out(node)
    target = b.one("Shape", [("x", dst)], torch.int32, (dst.rank,), {"dtype": 3})  # Shape's default: int32 (3)
    return b.one("BroadcastTo", [("x", src), ("shape", target)], dtype, shape)


def sym_size(b: Builder, node: Any, x: Value, dim: int) -> Any:
    """``sym_size.int`` -> ``Shape`` (attr ``dtype``: int64, GE's C++ number 9) then ``Gather`` of the dim; a size
    that is known is a plain number."""
    size = node.meta["val"]
    if isinstance(size, int) or (isinstance(size, torch.SymInt) and size.node.is_constant()):
        return int(size)
    return dim_size(b, x, dim)


TABLE: dict[Any, Callable[..., Any]] = {
    aten.view.default: reshape,
    aten._unsafe_view.default: reshape,
    aten.alias.default: alias,
    aten.t.default: t,
    aten.permute.default: permute,
    aten.squeeze.dim: squeeze_dim,
    aten.unbind.int: unbind,
    aten.stack.default: stack,
    aten.as_strided.default: as_strided,
    aten.tril.default: tril,
    aten.transpose.int: transpose,
    aten.unsqueeze.default: unsqueeze,
    aten.expand.default: expand,
    aten.slice.Tensor: slice_,
    aten.split.Tensor: split,
    aten.split_with_sizes.default: split_with_sizes,
    aten.cat.default: cat,
    aten.index_select.default: index_select,
    aten.embedding.default: embedding,
    aten.arange.default: arange,
    aten.arange.start: arange_start,
    aten.copy.default: copy,
    aten.sym_size.int: sym_size,
}
