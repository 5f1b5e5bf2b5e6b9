"""A tiny GE graph builder for the executor's tests: ops are written as GE_IR.md lays them out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

import ge_executor as ge
from ge_executor import ge_ir


class Builder:
    """Builds one ``GraphDef`` op by op; ``out(name, i)`` is the edge ``"name:i"``."""

    def __init__(self, name: str = "g") -> None:
        self.graph = ge_ir.GraphDef(name=name)
        self._inputs = 0

    def op(self, op_type: str, inputs: Sequence[str] = (), name: str | None = None,
           out_dims: Sequence[Sequence[int]] = (), in_names: Sequence[str] = (), **attrs: Any) -> str:
        """Append an op; ``out_dims``: the shapes its output descs describe (none: no output descs, as upstream
        writes its ops); ``in_names``: the names of its input descs (``x1``, ``x2``, ...)."""
        op = self.graph.op.add(name=name or f"{op_type}_{len(self.graph.op)}", type=op_type)
        op.input.extend(inputs)
        for dims in out_dims:
            op.output_desc.add(layout="ND").shape.dim.extend(dims)
        for input_name in in_names:
            op.input_desc.add(name=input_name, layout="ND")
        for key, value in attrs.items():
            attr = op.attr[key]
            if isinstance(value, bool):
                attr.b = value
            elif isinstance(value, int):
                attr.i = value
            elif isinstance(value, float):
                attr.f = value
            elif isinstance(value, bytes):
                attr.s = value
            elif isinstance(value, torch.dtype):  # a data type: C++ numbering, as a dt attr
                attr.dt = ge_ir.cpp_dtype(value)
            elif isinstance(value, list):
                attr.list.i.extend(value)
            else:
                raise TypeError(f"attr {key}={value!r}")
        return op.name

    def data(self, tensor: torch.Tensor | None = None, dims: list[int] | None = None) -> str:
        name = self.op("Data", index=self._inputs)
        self._inputs += 1
        if tensor is not None:
            desc = self.graph.op[-1].output_desc.add(dtype=ge_ir.proto_dtype(tensor.dtype), layout="ND")
            desc.shape.dim.extend(list(tensor.shape) if dims is None else dims)
        return f"{name}:0"

    def const(self, tensor: torch.Tensor) -> str:
        name = self.op("Const")
        op = self.graph.op[-1]
        value = op.attr["value"].t
        value.desc.dtype = ge_ir.proto_dtype(tensor.dtype)
        value.desc.layout = "ND"
        value.desc.shape.dim.extend(tensor.shape)
        value.data = tensor.contiguous().numpy().tobytes() if tensor.dtype != torch.bfloat16 else \
            tensor.contiguous().view(torch.int16).numpy().tobytes()
        op.output_desc.add().CopyFrom(value.desc)
        return f"{name}:0"

    def output(self, *edges: str, dims: Sequence[Sequence[int]] = ()) -> ge.Graph:
        """The NetOutput of ``edges`` (``dims``: the shapes it describes for them, as upstream writes them) and the
        loaded graph."""
        self.op("NetOutput", list(edges))
        for shape in dims:
            self.graph.op[-1].input_desc.add(layout="ND").shape.dim.extend(shape)
        return ge.load(ge_ir.ModelDef(name="m", graph=[self.graph]).SerializeToString())


def run_op(op_type: str, inputs: Sequence[torch.Tensor | None], outputs: int = 1,
           out_dims: Sequence[Sequence[int]] = (), in_names: Sequence[str] = (), **attrs: Any) -> list[torch.Tensor]:
    """Run one ``op_type`` op on ``inputs`` (``None``: an omitted optional input) and return its outputs."""
    b = Builder()
    feeds = [t for t in inputs if t is not None]
    edges = []
    for t in inputs:
        edges.append("" if t is None else b.data(t))
    name = b.op(op_type, edges, out_dims=out_dims, in_names=in_names, **attrs)
    return b.output(*[f"{name}:{i}" for i in range(outputs)]).run(feeds)
