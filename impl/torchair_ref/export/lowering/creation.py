"""EX-7 lowerings of operators that create a tensor from a size and a value: ``Fill`` of a 0-d value, the value a
``Const`` (or a ``Const`` then ``Cast``, where upstream casts a Python number), the dims a ``Const`` or a ``Pack``
of symbolic sizes (``Builder.int_list``), or ``Shape`` of a tensor for the ``*_like`` operators.

Each follows the converter of the same name in the wheel's ``ge_converter/aten/`` (cited per function). Layout,
device, pinning and memory format do not change the graph (upstream refuses a layout other than strided, and so
does the reference). The output dtype is the traced one, which is what each converter computes it to be.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..op_builder import Builder, Value
from .common import out, unsupported

aten = torch.ops.aten


def _dense(node: Any, layout: Any) -> None:
    if layout not in (None, torch.strided):
        raise unsupported(node, f"with layout={layout} (only dense tensors)")


def _cast_number(b: Builder, number: Any, dtype: torch.dtype) -> Value:
    """``ge.Cast(<python float>, dst_type=dtype)``: a float32 ``Const`` and a ``Cast`` (none when float32)."""
    return b.cast(b.const(float(number), torch.float32), dtype)


def _fill(b: Builder, node: Any, dims: Value, value: Value) -> Value:
    dtype, shape = out(node)
    return b.one("Fill", [("dims", dims), ("value", value)], dtype, shape)


def ones(b: Builder, node: Any, size: Any, *, dtype: Any = None, layout: Any = None, **_placement: Any) -> Value:
    """``ones`` -> ``Fill(size, Const 1 of the dtype)`` (ones.py:20-33)."""
    _dense(node, layout)
    return _fill(b, node, b.int_list(size), b.const(1, out(node)[0]))


def zeros(b: Builder, node: Any, size: Any, *, dtype: Any = None, layout: Any = None, **_placement: Any) -> Value:
    """``zeros`` -> ``Fill(size, 0.0)``, the 0.0 cast to ``dtype`` when one is given (zeros.py:26-39)."""
    _dense(node, layout)
    value = b.const(0.0, torch.float32) if dtype is None else _cast_number(b, 0.0, dtype)
    return _fill(b, node, b.int_list(size), value)


def new_ones(b: Builder, node: Any, x: Value, size: Any, *, dtype: Any = None, layout: Any = None,
             **_placement: Any) -> Value:
    """``new_ones`` -> ``Fill(size, Cast(1.0, dtype or x's))`` (new_ones.py:13-32)."""
    _dense(node, layout)
    return _fill(b, node, b.int_list(size), _cast_number(b, 1.0, dtype or x.dtype))


def new_zeros(b: Builder, node: Any, x: Value, size: Any, *, dtype: Any = None, layout: Any = None,
              **_placement: Any) -> Value:
    """``new_zeros`` -> ``Fill(size, Cast(0.0, dtype or x's))`` (new_zeros.py:13-32)."""
    _dense(node, layout)
    return _fill(b, node, b.int_list(size), _cast_number(b, 0.0, dtype or x.dtype))


def full(b: Builder, node: Any, size: Any, fill_value: Any, *, dtype: Any = None, layout: Any = None,
         **_placement: Any) -> Value:
    """``full`` -> ``Fill(size, fill_value in the output dtype)``; an empty size is the 0-d value itself
    (full.py:21-39)."""
    _dense(node, layout)
    value = b.promote(fill_value, out(node)[0])
    if not size:
        return value
    return _fill(b, node, b.int_list(size), value)


def new_full(b: Builder, node: Any, x: Value, size: Any, fill_value: Any, *, dtype: Any = None, layout: Any = None,
             **_placement: Any) -> Value:
    """``new_full`` -> ``Fill(size, fill_value in dtype or x's)`` (new_full.py:11-29)."""
    _dense(node, layout)
    return _fill(b, node, b.int_list(size), b.promote(fill_value, dtype or x.dtype))


def full_like(b: Builder, node: Any, x: Value, fill_value: Any, *, dtype: Any = None, layout: Any = None,
              memory_format: Any = None, **_placement: Any) -> Value:
    """``full_like`` -> ``Fill(Shape(x), Cast(fill_value, dtype or x's))`` (full_like.py:10-27); ``Shape`` in its
    default int32 (attr ``dtype`` 3)."""
    _dense(node, layout)
    dims = b.one("Shape", [("x", x)], torch.int32, (x.rank,), {"dtype": 3})
    number = fill_value if isinstance(fill_value, (bool, int, float)) else None
    if number is None:
        raise unsupported(node, f"with fill value {fill_value!r}")
    return _fill(b, node, dims, _cast_number(b, number, dtype or x.dtype))


def empty_like(b: Builder, node: Any, x: Value, *, dtype: Any = None, layout: Any = None,
               memory_format: Any = None, **_placement: Any) -> Value:
    """``empty_like`` -> ``Fill(Shape(x), Cast(0.0, dtype or x's))`` (empty_like.py:17-35, which writes ``Fill``
    rather than ``Empty``); ``Shape`` in its default int32 (attr ``dtype`` 3). A memory format other than contiguous
    or preserve is refused, as there."""
    _dense(node, layout)
    if memory_format not in (None, torch.contiguous_format, torch.preserve_format):
        raise unsupported(node, f"with memory_format={memory_format} (only contiguous and preserve)")
    dims = b.one("Shape", [("x", x)], torch.int32, (x.rank,), {"dtype": 3})
    return _fill(b, node, dims, _cast_number(b, 0.0, dtype or x.dtype))


def scalar_tensor(b: Builder, node: Any, s: Any, *, dtype: Any = None, layout: Any = None,
                  **_placement: Any) -> Value:
    """``scalar_tensor`` -> a 0-d ``Const`` of the number in the output dtype (scalar_tensor.py:5-21)."""
    _dense(node, layout)
    return b.promote(s, out(node)[0])


TABLE: dict[Any, Callable[..., Any]] = {
    aten.ones.default: ones,
    aten.zeros.default: zeros,
    aten.new_ones.default: new_ones,
    aten.new_zeros.default: new_zeros,
    aten.full.default: full,
    aten.new_full.default: new_full,
    aten.full_like.default: full_like,
    aten.empty_like.default: empty_like,
    aten.scalar_tensor.default: scalar_tensor,
}
