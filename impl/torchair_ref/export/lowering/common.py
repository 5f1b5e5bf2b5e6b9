"""Helpers every lowering family uses: the traced output's descriptor, the traced value of an argument, a dim's size
at run time, GE's data layout on an op's descs, and the refusal of an unsupported variant."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch.fx

from ..op_builder import COVERAGE_DOC, Builder, UnsupportedOperatorError, Value, spec_of, where

_INT_DTYPE = {bool: torch.bool, int: torch.int64, float: torch.float32}
#: the attrs upstream's ``Gather`` calls leave at their defaults
GATHER_ATTRS = {"batch_dims": 0, "is_preprocessed": False, "negative_index_support": False}


def out(node: torch.fx.Node, index: int | None = None) -> tuple[Any, tuple[int, ...]]:
    """(dtype, dims) of the node's traced output (``index`` of a multi-output node)."""
    val = node.meta["val"]
    return spec_of(val if index is None else val[index])


def traced(value: Any) -> Any:
    """What an FX argument was at trace time: a node's fake tensor (or symbolic scalar), else the value itself."""
    return value.meta.get("val") if isinstance(value, torch.fx.Node) else value


def scalar_dtype(number: Any) -> torch.dtype:
    """The dtype upstream gives a Python number it makes a ``Const`` of (``utils.type_to_dtype``: bool, int64,
    the default float dtype float32)."""
    return _INT_DTYPE[bool if isinstance(number, bool) else int if isinstance(number, int) else float]


def dim_size(b: Builder, x: Value, dim: int) -> Value:
    """x's size along ``dim`` at run time, a 0-d int64: ``Shape`` (attr ``dtype``: int64, GE's C++ number 9) then
    ``Gather`` of the dim, as upstream lowers ``sym_size`` (sym_size.py)."""
    shape = b.one("Shape", [("x", x)], torch.int64, (x.rank,), {"dtype": 9})
    return b.one("Gather", [("x", shape), ("indices", b.const(dim, torch.int64))], torch.int64, (),
                 {"validate_indices": True, **GATHER_ATTRS})


def layout(b: Builder, fmt: str, inputs: Sequence[int] = (), outputs: Sequence[int] = ()) -> None:
    """Give the last op's ``inputs`` and ``outputs`` descs the data layout ``fmt`` (``"NCHW"``), as upstream's
    ``specific_op_input_layout``/``specific_op_output_layout`` do (``ge_converter/converter_utils.py``); the rest
    stay ``"ND"``."""
    op = b.graph.op[-1]
    for k in inputs:
        op.input_desc[k].layout = fmt
    for k in outputs:
        op.output_desc[k].layout = fmt


def unsupported(node: torch.fx.Node, why: str) -> UnsupportedOperatorError:
    """EX-7: the error for a call of a lowered operator with arguments its lowering does not cover."""
    return UnsupportedOperatorError(
        f"dynamo_export: {node.target} {why}; the reference has no GE lowering for that (EX-7). It is called at "
        f"{where(node)}. What the reference lowers, beside what upstream TorchAir converts: {COVERAGE_DOC}.")
