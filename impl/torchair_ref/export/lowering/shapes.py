"""EX-7 lowerings of shape, layout and indexing operators, and of symbolic sizes.

Each follows the converter of the same name in the wheel's ``ge_converter/aten/`` (``view.py``, ``_unsafe_view.py``,
``t.py``, ``transpose.py``, ``unsqueeze.py``, ``expand.py``, ``slice.py``, ``split.py``, ``cat.py``,
``index_select.py``, ``embedding.py``, ``arange.py``, ``copy.py``, ``sym_size.py``). Shape and index operands are
int64 (GE's index type; ``split``'s axis is int32 as upstream writes it); a list that holds a symbolic size is a
``Pack``.
"""

from __future__ import annotations

from typing import Any

import torch

from ..ge_build import Builder, Value
from .common import out, unsupported

aten = torch.ops.aten
_INT32_MAX = 2147483647
_GATHER_ATTRS = {"batch_dims": 0, "is_preprocessed": False, "negative_index_support": False}


def reshape(b: Builder, node: Any, x: Value, size: Any) -> Value:
    """``view``/``_unsafe_view`` -> ``Reshape(x, shape)``, attrs ``axis`` 0 and ``num_axes`` -1."""
    dtype, shape = out(node)
    return b.one("Reshape", [("x", x), ("shape", b.int_list(size))], dtype, shape, {"axis": 0, "num_axes": -1})


def _transpose(b: Builder, node: Any, x: Value, perm: list[int]) -> Value:
    dtype, shape = out(node)
    return b.one("Transpose", [("x", x), ("perm", b.const(perm, torch.int64))], dtype, shape)


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
    if any(v == -1 for v in size if not isinstance(v, Value)):
        size = [shape[k] if not isinstance(v, Value) and v == -1 else v for k, v in enumerate(size)]
        if -1 in [v for v in size if not isinstance(v, Value)]:
            raise unsupported(node, "with -1 for a symbolic dim")
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
    rest), as upstream writes it."""
    outputs = [out(node, k) for k in range(len(node.meta["val"]))]
    if isinstance(split_size, Value):
        raise unsupported(node, "with a symbolic split size")
    sizes = [int(split_size)] * (len(outputs) - 1) + [-1]
    return b.op("SplitV", [("x", x), ("size_splits", b.const(sizes, torch.int64)),
                           ("split_dim", b.const(dim, torch.int32))], outputs, {"num_split": len(outputs)})


def cat(b: Builder, node: Any, tensors: list[Value], dim: int = 0) -> Value:
    """``cat`` -> ``ConcatV2(x..., concat_dim)``, attr ``N``; inputs promoted to the output dtype."""
    dtype, shape = out(node)
    inputs = [(f"x{k}", b.promote(v, dtype)) for k, v in enumerate(tensors)]
    return b.one("ConcatV2", [*inputs, ("concat_dim", b.const(dim, torch.int64))], dtype, shape, {"N": len(inputs)})


def index_select(b: Builder, node: Any, x: Value, dim: int, index: Value) -> Value:
    """``index_select`` -> ``GatherV2(x, indices, axis)``."""
    dtype, shape = out(node)
    return b.one("GatherV2", [("x", x), ("indices", index), ("axis", b.const(dim, torch.int64))], dtype, shape,
                 dict(_GATHER_ATTRS))


def embedding(b: Builder, node: Any, weight: Value, indices: Value, padding_idx: Any = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Value:
    """``embedding`` -> ``GatherV2(weight, indices, axis [0])``."""
    if scale_grad_by_freq or sparse:
        raise unsupported(node, "with scale_grad_by_freq or sparse")
    dtype, shape = out(node)
    return b.one("GatherV2", [("x", weight), ("indices", indices), ("axis", b.const([0], torch.int64))], dtype,
                 shape, dict(_GATHER_ATTRS))


def arange(b: Builder, node: Any, end: Any, **_options: Any) -> Value:
    """``arange(end)`` -> ``Range(0, end, 1)`` in int32, then ``Cast`` to the output dtype."""
    dtype, shape = out(node)
    start, limit, delta = b.const(0, torch.int32), b.promote(end, torch.int32), b.const(1, torch.int32)
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
    shape = b.one("Shape", [("x", x)], torch.int64, (x.rank,), {"dtype": 9})
    return b.one("Gather", [("x", shape), ("indices", b.const(dim, torch.int64))], torch.int64, (),
                 {"validate_indices": True, **_GATHER_ATTRS})


TABLE = {
    aten.view.default: reshape,
    aten._unsafe_view.default: reshape,
    aten.t.default: t,
    aten.transpose.int: transpose,
    aten.unsqueeze.default: unsqueeze,
    aten.expand.default: expand,
    aten.slice.Tensor: slice_,
    aten.split.Tensor: split,
    aten.cat.default: cat,
    aten.index_select.default: index_select,
    aten.embedding.default: embedding,
    aten.arange.default: arange,
    aten.copy.default: copy,
    aten.sym_size.int: sym_size,
}
