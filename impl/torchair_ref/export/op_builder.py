"""The op-building API lowerings use (EX-7, EX-9): ``Value`` (one output of a GE op), ``Builder`` (appends GE ops to a
GraphDef), ``spec_of`` and ``where``; the walk over an FX graph that calls the lowerings is ``ge_build.py``.

It is its own module so that the lowering tables (``lowering/``) import it and ``ge_build`` imports them, with no
circle between the two (tests/test_layers.py forbids cycles).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx

from ge_executor import ge_ir
from torchair_ref import _torch

from ..errors import TorchairRefError
from .pbtxt import module_stack_text, set_attr
from .weights import raw_bytes

#: the generated table of the ATen operators upstream TorchAir converts, which of them the reference lowers and which
#: GE op types the executor runs (``python -m tests.ge_coverage`` writes it; a test keeps it current)
COVERAGE_DOC = "docs/ge-coverage.md"


class UnsupportedOperatorError(TorchairRefError, NotImplementedError):
    """EX-7: an operator the reference has no GE lowering for; the message names it, the model code calling it and
    the coverage table (``COVERAGE_DOC``)."""


@dataclass(frozen=True)
class Value:
    """One output of a GE op: ``"<op>:<index>"`` with its dtype and shape (``-1`` for a symbolic dim)."""

    op: str
    index: int
    dtype: torch.dtype
    shape: tuple[int, ...]

    @property
    def ref(self) -> str:
        return f"{self.op}:{self.index}"

    @property
    def rank(self) -> int:
        return len(self.shape)


def _dims(shape: Sequence[Any]) -> tuple[int, ...]:
    is_concrete_int = _torch.is_concrete_int()
    return tuple(int(d) if is_concrete_int(d) else -1 for d in shape)


def spec_of(value: Any) -> tuple[torch.dtype, tuple[int, ...]]:
    """(dtype, dims) of a traced value: a (fake) tensor, or a Python/symbolic scalar (a 0-d tensor in GE)."""
    if isinstance(value, torch.Tensor):
        return value.dtype, _dims(value.shape)
    if isinstance(value, (bool, torch.SymBool)):
        return torch.bool, ()
    if isinstance(value, (int, torch.SymInt)):
        return torch.int64, ()
    if isinstance(value, (float, torch.SymFloat)):
        return torch.float64, ()
    raise TypeError(f"internal: no GE descriptor for a traced value of type {type(value).__name__}")


def _desc(dtype: torch.dtype, shape: Sequence[int], name: str = "") -> Any:
    desc = ge_ir.TensorDescriptor(layout="ND", dtype=ge_ir.proto_dtype(dtype), name=name)
    desc.shape.dim.extend(shape)
    return desc


class Builder:
    """Appends GE ops to a GraphDef in topological order; what lowerings call to build their ops."""

    def __init__(self, graph: Any, record_module_stack: bool) -> None:
        self.graph = graph
        self.record_module_stack = record_module_stack
        self.names: set[str] = set()
        self.values: dict[torch.fx.Node, Any] = {}  # FX node -> Value, or a list of Values for a multi-output node
        self.node: torch.fx.Node | None = None  # the node being lowered (for its module stack)
        self.data_ops = 0

    def unique(self, name: str) -> str:
        candidate, k = name, 0
        while candidate in self.names:
            k += 1
            candidate = f"{name}_{k}"
        self.names.add(candidate)
        return candidate

    def op(self, op_type: str, inputs: Sequence[tuple[str, Value | None]], outputs: Sequence[tuple[torch.dtype,
           Sequence[int]]], attrs: dict[str, Any] | None = None, *, name: str | None = None) -> list[Value]:
        """Append one op: ``inputs`` as (GE input name, value or None for an omitted optional input), in GE's order;
        ``attrs`` by GE attr name; returns its outputs."""
        op = ge_ir.OpDef(name=self.unique(name or op_type), type=op_type)
        for input_name, value in inputs:
            op.input.append(value.ref if value is not None else "")
            op.input_desc.append(_desc(value.dtype, value.shape, input_name) if value is not None else
                                 ge_ir.TensorDescriptor(name=input_name))
        for key, attr in (attrs or {}).items():
            if not set_attr(op.attr[key], attr):
                del op.attr[key]
        stack = self.node.meta.get("nn_module_stack") if self.node is not None else None
        if self.record_module_stack and stack:
            op.attr["nn_module_stack"].s = module_stack_text(stack).encode()
        for dtype, shape in outputs:
            op.output_desc.append(_desc(dtype, shape))
        op.id = len(self.graph.op)
        self.graph.op.extend([op])
        return [Value(op.name, i, dtype, tuple(shape)) for i, (dtype, shape) in enumerate(outputs)]

    def one(self, op_type: str, inputs: Sequence[tuple[str, Value | None]], dtype: torch.dtype,
            shape: Sequence[int], attrs: dict[str, Any] | None = None, *, name: str | None = None) -> Value:
        """``op`` for the common case of one output."""
        return self.op(op_type, inputs, [(dtype, shape)], attrs, name=name)[0]

    def const(self, data: Any, dtype: torch.dtype) -> Value:
        """A ``Const`` op holding ``data`` (a number, a list of numbers or a tensor) as ``dtype``."""
        tensor = torch.as_tensor(data).to(dtype).contiguous()
        op = ge_ir.OpDef(name=self.unique("Const"), type="Const")
        desc = _desc(dtype, tuple(tensor.shape))
        op.attr["value"].t.desc.CopyFrom(desc)
        op.attr["value"].t.data = raw_bytes(tensor)
        op.output_desc.append(desc)
        op.id = len(self.graph.op)
        self.graph.op.extend([op])
        return Value(op.name, 0, dtype, tuple(tensor.shape))

    def cast(self, value: Value, dtype: torch.dtype) -> Value:
        """``Cast`` to ``dtype`` (attr ``dst_type``: GE's C++ type number), or ``value`` itself when it has it."""
        if value.dtype == dtype:
            return value
        return self.one("Cast", [("x", value)], dtype, value.shape, {"dst_type": ge_ir.cpp_dtype(dtype)})

    def promote(self, value: Any, dtype: torch.dtype) -> Value:
        """Upstream's ``dtype_promote``: a tensor cast to ``dtype``, a Python number as a 0-d ``Const`` of it."""
        return self.cast(value, dtype) if isinstance(value, Value) else self.const(value, dtype)

    def int_list(self, values: Sequence[Any], dtype: torch.dtype = torch.int64) -> Value:
        """A shape-like list as a 1-d tensor: a ``Const`` when every entry is known, else a ``Pack`` of 0-d entries
        (the symbolic ones computed in the graph, the others ``Const``)."""
        if not any(isinstance(v, Value) for v in values):
            return self.const([int(v) for v in values], dtype)
        entries = [self.promote(v, dtype) for v in values]
        return self.one("Pack", [(f"x{k}", v) for k, v in enumerate(entries)], dtype, (len(entries),),
                        {"N": len(entries), "axis": 0})



def where(node: torch.fx.Node) -> str:
    """The model code an FX node comes from: its module path and the innermost source line Dynamo recorded."""
    stack = node.meta.get("nn_module_stack") or {}
    modules = " > ".join(module_stack_text(stack).splitlines()) if stack else "the model's top level"
    trace = (node.meta.get("stack_trace") or "").strip().splitlines()
    line = next((t.strip() for t in reversed(trace) if t.strip().startswith("File ")), "")
    return f"{modules}" + (f" ({line})" if line else "") + f" [FX node {node.name}]"

