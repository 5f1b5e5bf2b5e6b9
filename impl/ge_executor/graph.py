"""EX-11, IMPL-4: load a GE ``ModelDef``/``GraphDef`` (GE_IR.md), check it, and run it on CPU tensors.

Checks at load: every data edge ``"<op>:<index>"`` names an op of the graph and one of its outputs (``""`` is an
omitted optional input, ``:-1`` a control edge that orders but carries no data), the graph has no cycle, exactly one
``NetOutput``, ``Data`` indexes 0..n-1, every op type has a kernel (else ``UnsupportedOpError``) and every checked input
whose dtype the descs record is one the op accepts (else ``UnsupportedDtypeError``).

At run time, on the real tensors: each op's dtype signature (``registry.Kernel.check_inputs``: the types its
registration accepts, inputs that share one type variable), and each result against the static shape the graph
describes for it (``described.py``: an op's output desc, the ``NetOutput``'s input descs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ge_executor import ge_ir
from ge_executor.described import check_described
from ge_executor.errors import GeExecutorError, GraphCheckError, unsupported_op
from ge_executor.kernels import KERNELS
from ge_executor.registry import OpView, ge_name

__all__ = ["Graph", "load", "supported_op_types", "STRUCTURAL"]

#: op types the executor handles itself rather than through a kernel
STRUCTURAL = ("Data", "NetOutput")


def supported_op_types() -> list[str]:
    """Every GE op type the executor runs: the structural ones and those with a kernel."""
    return sorted({*STRUCTURAL, *KERNELS})


#: one step's outputs; ``None`` only where a ``NetOutput`` passes an omitted input through
_Outputs = tuple[torch.Tensor | None, ...]


@dataclass(frozen=True)
class _Step:
    view: OpView
    inputs: tuple[tuple[int, int] | None, ...]  # (producer step, output index) per input slot; None: omitted


class Graph:
    """A checked GE graph, ready to run; ``weights_dir`` resolves relative ``FileConstant`` paths."""

    def __init__(self, graph: Any, weights_dir: Path | None = None) -> None:
        self.name: str = graph.name
        self.weights_dir = weights_dir
        self._steps, self._data_index, self._output = _plan(graph, weights_dir)
        self.op_types: dict[str, int] = {}
        for step in self._steps:
            self.op_types[step.view.type] = self.op_types.get(step.view.type, 0) + 1
        self.num_inputs = len(self._data_index)

    def run(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor | None]:
        """Compute the graph's outputs (the ``NetOutput`` inputs, in order) from ``inputs`` (``Data`` index order);
        an input the ``NetOutput`` omits (an ``""`` edge) comes back as ``None``."""
        if len(inputs) != self.num_inputs:
            raise GeExecutorError(f"graph {self.name!r} has {self.num_inputs} Data inputs, got {len(inputs)} tensors")
        with torch.no_grad():  # GE computes values, never an autograd graph
            return self._run(inputs)

    def _run(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor | None]:
        # each step's outputs, by position; the steps are in topological order, so every producer's are here already
        values: list[_Outputs] = []
        for position, step in enumerate(self._steps):
            args = [None if ref is None else values[ref[0]][ref[1]] for ref in step.inputs]
            if step.view.type == "Data":
                out: torch.Tensor | _Outputs = _data(step.view, inputs[self._data_index[position]])
            elif step.view.type == "NetOutput":
                self._check_outputs(step, args)
                # GE writes outputs to their own buffers: a graph input passed straight through is copied
                out = tuple(a.clone() if a is not None and any(a is i for i in inputs) else a for a in args)
            else:
                entry = KERNELS[step.view.type]
                entry.check_inputs(step.view, args)
                computed = out = entry.fn(step.view, args)
                for k, result in enumerate(computed if isinstance(computed, tuple) else (computed,)):
                    check_described(result, step.view.output_desc(k),
                                    f"op {step.view.type} ({step.view.name!r}) output {k}")
            values.append(out if isinstance(out, tuple) else (out,))
        return list(values[self._output])

    def _check_outputs(self, step: _Step, args: Sequence[torch.Tensor | None]) -> None:
        """The graph's outputs against the shapes its ``NetOutput`` describes, naming the op that computed each."""
        descs = step.view.op.input_desc
        for k, (result, ref) in enumerate(zip(args, step.inputs)):
            if k < len(descs) and ref is not None and result is not None:
                producer = self._steps[ref[0]].view
                check_described(result, descs[k], f"graph output {k} (op {producer.type} ({producer.name!r}) "
                                                  f"output {ref[1]})")


def load(model: bytes | Any, weights_dir: str | Path | None = None) -> Graph:
    """Check and prepare ``model``: a serialized ``ModelDef`` (its ``graph[0]`` runs), or a parsed ModelDef/GraphDef."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        parsed = ge_ir.ModelDef()
        try:
            parsed.ParseFromString(bytes(model))
        except Exception as exc:  # protobuf's DecodeError has no stable import path across runtimes
            raise GraphCheckError(f"not a serialized GE ModelDef ({len(model)} bytes): {exc}") from exc
        model = parsed
    if hasattr(model, "graph") and not hasattr(model, "op"):
        if len(model.graph) == 0:
            raise GraphCheckError(f"ModelDef {model.name!r} holds no graph")
        model = model.graph[0]
    if not hasattr(model, "op"):
        raise GraphCheckError(
            f"expected serialized ModelDef bytes, a ModelDef or a GraphDef, got {type(model).__name__}")
    if not isinstance(model, ge_ir.GraphDef):
        # another copy of the schema (upstream's ge.proto, the suite's reader): re-read through the executor's
        model = ge_ir.GraphDef.FromString(model.SerializeToString())
    return Graph(model, None if weights_dir is None else Path(weights_dir))


def _data(view: OpView, tensor: torch.Tensor) -> torch.Tensor:
    """A graph input, checked against its ``Data`` desc: dtype, rank and every static (non -1) dim."""
    if not isinstance(tensor, torch.Tensor):
        raise GeExecutorError(f"Data {view.name!r} expects a torch.Tensor, got {type(tensor).__name__}")
    desc = view.output_desc(0)
    if desc is None or not desc.HasField("shape"):
        return tensor
    want = ge_ir.proto_dtype_name(desc.dtype)
    if want not in (None, "DT_UNDEFINED") and want != ge_name(tensor.dtype):
        raise GeExecutorError(f"Data {view.name!r} is {want}, got a {tensor.dtype} tensor")
    dims = list(desc.shape.dim)
    if dims == [-2]:  # GE's unknown rank
        return tensor
    if not dims and tensor.shape == (1,):
        # upstream feeds a Python scalar as a 1-element tensor (ge/_ge_graph.py:704, numpy.array([value])) into a
        # scalar Data, which GE accepts
        return tensor.reshape(())
    if len(dims) != tensor.dim() or any(d >= 0 and d != n for d, n in zip(dims, tensor.shape)):
        raise GeExecutorError(f"Data {view.name!r} has shape {dims} (-1: any), got {list(tensor.shape)}")
    return tensor


def _plan(graph: Any, weights_dir: Path | None) -> tuple[list[_Step], dict[int, int], int]:
    """Order the ops topologically (data and control edges) and resolve every data edge; check the graph."""
    ops = list(graph.op)
    by_name: dict[str, int] = {}
    for i, op in enumerate(ops):
        if op.name in by_name:
            raise GraphCheckError(f"graph {graph.name!r}: two ops are named {op.name!r}")
        by_name[op.name] = i
    deps: list[list[int]] = [[] for _ in ops]
    refs: list[list[tuple[int, int] | None]] = [[] for _ in ops]
    for i, op in enumerate(ops):
        for edge in op.input:
            if edge == "":
                refs[i].append(None)
                continue
            src, _, index = edge.rpartition(":")
            if src not in by_name or not index.lstrip("-").isdigit():
                raise GraphCheckError(f"op {op.type} ({op.name!r}): input {edge!r} names no op of graph {graph.name!r}")
            deps[i].append(by_name[src])
            if int(index) == -1:
                continue
            if int(index) < 0:
                raise GraphCheckError(f"op {op.type} ({op.name!r}): input {edge!r} has a negative output index")
            refs[i].append((by_name[src], int(index)))
    missing = [op for op in ops if op.type not in STRUCTURAL and op.type not in KERNELS]
    if missing:
        others = sorted({op.type for op in missing} - {missing[0].type})
        raise unsupported_op(missing[0].type, missing[0].name, others)
    order = _topological(ops, deps, graph.name)
    position = {old: new for new, old in enumerate(order)}
    steps, data_index, outputs = [], {}, []
    for new, old in enumerate(order):
        op = ops[old]
        view = OpView(op, weights_dir)
        if op.type == "NetOutput":
            outputs.append(new)
        elif op.type == "Data":
            data_index[new] = view.i("index")
        else:
            _check_desc_dtype(op, ops, refs[old])
        steps.append(_Step(view, tuple(None if r is None else (position[r[0]], r[1]) for r in refs[old])))
    if len(outputs) != 1:
        raise GraphCheckError(f"graph {graph.name!r} has {len(outputs)} NetOutput ops; GE needs exactly one")
    if sorted(data_index.values()) != list(range(len(data_index))):
        raise GraphCheckError(f"graph {graph.name!r}: Data indexes {sorted(data_index.values())} are not 0..n-1")
    return steps, data_index, outputs[0]


def _check_desc_dtype(op: Any, ops: list[Any], refs: list[tuple[int, int] | None]) -> None:
    """At load, where the producer's output desc records a dtype, the checked input's dtype must be accepted."""
    entry = KERNELS[op.type]
    ref = refs[entry.checked] if entry.checked < len(refs) else None
    if ref is None:
        return
    producer = ops[ref[0]]
    if ref[1] >= len(producer.output_desc):
        return
    name = ge_ir.proto_dtype_name(producer.output_desc[ref[1]].dtype)
    if name not in (None, "DT_UNDEFINED"):
        entry.check_dtype(op.name, name)


def _topological(ops: list[Any], deps: list[list[int]], graph_name: str) -> list[int]:
    """Kahn's order, stable in the graph's op order; GraphCheckError on a cycle."""
    waiting = [len(set(d)) for d in deps]
    users: list[list[int]] = [[] for _ in ops]
    for i, d in enumerate(deps):
        for src in set(d):
            users[src].append(i)
    ready = [i for i, n in enumerate(waiting) if n == 0]
    order: list[int] = []
    while ready:
        i = ready.pop(0)
        order.append(i)
        for user in users[i]:
            waiting[user] -= 1
            if waiting[user] == 0:
                ready.append(user)
    if len(order) != len(ops):
        stuck = sorted(ops[i].name for i in range(len(ops)) if waiting[i] > 0)[:5]
        raise GraphCheckError(f"graph {graph_name!r} has a cycle through ops {stuck}")
    return order
