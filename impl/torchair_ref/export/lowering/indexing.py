"""EX-7 lowerings of operators that pick elements by index: ``select.int`` (``GatherV2`` with negative indices),
``index.Tensor`` (``IndexByTensor``), ``gather`` (``GatherElements``).

Each follows the converter of the same name in the wheel's ``ge_converter/aten/`` (cited per function); indices are
int64, GE's index type, as upstream's ``dtype_promote(..., DT_INT64)`` and its ``TT_INDEX_NUMBER`` constants make
them (``ge/_ge_graph.py:1380-1384``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..op_builder import Builder, Value
from .common import out, unsupported

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


TABLE: dict[Any, Callable[..., Any]] = {
    aten.select.int: select,
    aten.index.Tensor: index,
    aten.gather.default: gather,
}
