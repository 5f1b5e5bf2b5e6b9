"""EX-7 lowerings of operators that pick elements by index: ``select.int`` (``GatherV2`` with negative indices),
``index.Tensor`` (``IndexByTensor``), ``gather`` (``GatherElements``), and of ``index_put`` (``TensorScatterUpdate``,
``TensorScatterAdd``), which writes them.

Each follows the converter of the same name in the wheel's ``ge_converter/aten/`` (cited per function); indices are
int64, GE's index type, as upstream's ``dtype_promote(..., DT_INT64)`` and its ``TT_INDEX_NUMBER`` constants make
them (``ge/_ge_graph.py:1380-1384``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..op_builder import Builder, Value
from .common import dim_size, out, unsupported

aten = torch.ops.aten


def select(b: Builder, node: Any, x: Value, dim: int, index: Any) -> Value:
    """``select.int`` -> ``GatherV2(x, index, axis [dim])`` with attr ``negative_index_support`` true, so that
    ``x[:, -1]`` counts from the end (select.py:17-20)."""
    dtype, shape = out(node)
    return b.one("GatherV2", [("x", x), ("indices", b.promote(index, torch.int64)),
                              ("axis", b.const([dim], torch.int64))], dtype, shape,
                 {"batch_dims": 0, "is_preprocessed": False, "negative_index_support": True})


def index(b: Builder, node: Any, x: Value, indices: list[Value | None]) -> Value:
    """``index.Tensor`` -> ``IndexByTensor(x, indices...)``, attr ``indices_mask`` 1 for each dim of x an index
    tensor selects on and 0 for each left whole (``None``), the index tensors int64 (index.py:5-9). A bool index
    (a mask, whose result size depends on its values) is refused.

    Departure: a bool x (transformers indexes its bool padding mask so) is indexed as uint8 and cast back, since
    ``IndexByTensor``'s registration takes ``BasicType()``, which has no bool (auto_generated_ge_raw_ops.py:17206);
    upstream passes the bool x as it is."""
    present = [i for i in indices if i is not None]
    if any(i.dtype == torch.bool for i in present):
        raise unsupported(node, "with a bool (mask) index: its result's size depends on the mask's values")
    dtype, shape = out(node)
    mask = [0 if i is None else 1 for i in indices]
    inputs = [(f"indices{k}", b.cast(i, torch.int64)) for k, i in enumerate(present)]
    compute = torch.uint8 if x.dtype == torch.bool else x.dtype
    y = b.one("IndexByTensor", [("x", b.cast(x, compute)), *inputs], compute, shape, {"indices_mask": mask})
    return b.cast(y, dtype)


def gather(b: Builder, node: Any, x: Value, dim: int, index_: Value, *, sparse_grad: bool = False) -> Value:
    """``gather`` -> ``GatherElements(x, index int64)``, attr ``dim`` (gather.py:6-11)."""
    dtype, shape = out(node)
    return b.one("GatherElements", [("x", x), ("index", b.cast(index_, torch.int64))], dtype, shape, {"dim": dim})


def _dim_size(b: Builder, x: Value, dim: int) -> Value:
    """x's size along ``dim`` as a 0-d int64: a ``Const`` when known, else read at run time (``dim_size``)."""
    return b.const(x.shape[dim], torch.int64) if x.shape[dim] != -1 else dim_size(b, x, dim)


def index_put(b: Builder, node: Any, x: Value, indices: list[Value | None], values: Value,
              accumulate: bool = False) -> Value:
    """``index_put`` -> ``TensorScatterUpdate(x, indices, values)`` (``TensorScatterAdd`` with ``accumulate``): the
    index tensors, each on one of x's leading dims, int64, a negative one counted from the end of its dim
    (``SelectV2(Less(i, 0), Add(i, size), i)``), stacked on a new last axis (``Unsqueeze`` for one, ``Pack`` for
    more), the values cast to x's dtype and broadcast to the indexed shape (``BroadcastTo``; its symbolic dims read at
    run time).

    Departure: upstream has no converter for ``index_put`` (index_put.py:5-13 raises "not implemented"), so a model
    that writes through an index tensor (transformers' grouped-matmul experts invert their sort permutation so) was
    refused there. torch-npu's own kernel writes the experimental ``IndexPutV2``, whose size and stride operands CANN
    does not document; ``TensorScatterUpdate``/``TensorScatterAdd`` are the documented ops with this semantics (and,
    as torch, leave unspecified which of two equal indices wins). Refused: a bool (mask) index, an index after a dim
    left whole (``x[:, i] = v``), index tensors of different symbolic shapes, and an ``accumulate`` dtype
    ``TensorScatterAdd`` does not take."""
    present = [i for i in indices if i is not None]
    if not present or any(i is None for i in indices[:len(present)]):
        raise unsupported(node, "with an index after a dimension left whole (only leading index tensors)")
    if any(i.dtype == torch.bool for i in present):
        raise unsupported(node, "with a bool (mask) index: the rows it writes depend on the mask's values")
    if accumulate and x.dtype not in _SCATTER_ADD:
        raise unsupported(node, f"with accumulate=True on a {x.dtype} tensor (TensorScatterAdd: {_SCATTER_ADD})")
    shapes = {i.shape for i in present}
    if len(shapes) > 1 and any(-1 in s for s in shapes):
        raise unsupported(node, f"with index tensors of different symbolic shapes {sorted(shapes)}")
    where_shape = _broadcast(shapes)
    dtype, shape = out(node)
    columns = []
    for dim, index_ in enumerate(present):
        i = b.cast(index_, torch.int64)
        negative = b.one("Less", [("x1", i), ("x2", b.const(0, torch.int64))], torch.bool, i.shape)
        wrapped = b.one("Add", [("x1", i), ("x2", _dim_size(b, x, dim))], torch.int64, i.shape)
        i = b.one("SelectV2", [("condition", negative), ("then", wrapped), ("else", i)], torch.int64, i.shape)
        if i.shape != where_shape:
            i = b.one("BroadcastTo", [("x", i), ("shape", b.const(list(where_shape), torch.int64))], torch.int64,
                      where_shape)
        columns.append(i)
    stacked = (torch.int64, (*where_shape, len(columns)))
    if len(columns) == 1:
        index_value = b.one("Unsqueeze", [("x", columns[0])], *stacked, {"axes": [len(where_shape)]})
    else:
        index_value = b.one("Pack", [(f"x{k}", c) for k, c in enumerate(columns)], *stacked,
                            {"N": len(columns), "axis": len(where_shape)})
    updates_shape = (*where_shape, *x.shape[len(present):])
    updates = b.cast(values, x.dtype)
    if updates.shape != updates_shape:
        # A symbolic dim of the indexed shape: the index tensors' (all of one shape then) or x's, at run time.
        lead = len(where_shape)
        dims = [d if d != -1 else dim_size(b, present[0], k) if k < lead else dim_size(b, x, len(present) + k - lead)
                for k, d in enumerate(updates_shape)]
        updates = b.one("BroadcastTo", [("x", updates), ("shape", b.int_list(dims))], x.dtype, updates_shape)
    operands = [("x", x), ("indices", index_value), ("updates", updates)]
    if accumulate:
        return b.one("TensorScatterAdd", operands, dtype, shape)
    return b.one("TensorScatterUpdate", operands, dtype, shape)


def _broadcast(shapes: set[tuple[int, ...]]) -> tuple[int, ...]:
    """The shape index tensors of these (known) shapes broadcast to, as torch broadcasts them."""
    rank = max(len(s) for s in shapes)
    padded = [(1,) * (rank - len(s)) + s for s in shapes]
    return tuple(max(dims) if min(dims) != 0 else 0 for dims in zip(*padded))


_SCATTER_ADD = (torch.float16, torch.float32, torch.int32, torch.int8, torch.uint8)  # auto_generated_ge_raw_ops:39448


TABLE: dict[Any, Callable[..., Any]] = {
    aten.select.int: select,
    aten.index.Tensor: index,
    aten.gather.default: gather,
    aten.index_put.default: index_put,
}
