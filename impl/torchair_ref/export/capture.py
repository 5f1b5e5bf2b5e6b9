"""Whole-model capture with Dynamo (EX-1): the ATen inference graph ``ge_build`` lowers to GE ops.

The model is called through a throwaway entry function compiled with ``torch.compile(fullgraph=True,
dynamic=...)`` into a backend that only records. The backend runs AOTAutograd in inference mode (grad disabled), so
the recorded graph is functional ATen with every parameter, buffer and input as a placeholder; it then returns a stub
that raises, so the model itself never runs (export costs one trace, not a forward pass, and collectives are not
executed).

Graph inputs: user inputs first, in the order of ``(args, kwargs)``; then the model's own parameters and buffers;
then any other tensor the graph captured (a global, a plain tensor attribute, a ``torch.tensor(...)`` literal).
Symbolic sizes that Dynamo lifts to graph inputs are read from the input tensors instead (``aten.sym_size.int``), so
a ``dynamic=True`` export still has one ``Data`` per user input, with ``-1`` in its shape for symbolic dims.
"""

from __future__ import annotations

import re
import types
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx

from torchair_ref import _torch

USER, WEIGHT, CONSTANT = "user", "weight", "constant"


@dataclass
class GraphInput:
    """One input of the captured graph: where its value comes from and what it is called in the GE graph."""

    role: str  # USER, WEIGHT or CONSTANT
    name: str  # user input: path in (args, kwargs); weight: fqn; constant: constant_<k>
    value: Any  # the real tensor (or, for a symbolic user int, its SymInt)
    node: torch.fx.Node  # the placeholder, or the get_attr node of a constant
    position: int = 0  # order among user inputs


@dataclass
class CapturedGraph:
    """An ATen inference graph and what its inputs are."""

    gm: torch.fx.GraphModule
    inputs: list[GraphInput] = field(default_factory=list)


class _GraphCaptured(Exception):
    """Raised by the stub the capture backend returns, so that the captured model is never run."""


def _call_model(model: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return model(*args, **kwargs)


def _stop(*_args: Any) -> None:
    raise _GraphCaptured


def capture(model: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any], *, dynamic: bool) -> CapturedGraph:
    """EX-1: trace ``model(*args, **kwargs)`` as one graph (a graph break raises) into an ATen inference graph."""
    recorded: dict[str, Any] = {}

    def backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        def keep(aten_gm: torch.fx.GraphModule, _inputs: Any) -> torch.fx.GraphModule:
            recorded["gm"] = aten_gm
            return aten_gm

        _torch.aot_module_simplified()(gm, example_inputs, fw_compiler=keep)
        # AOTAutograd's inputs: the graph module's own parameters and buffers, then the example inputs; Dynamo
        # names its placeholders after their source (``l_args_1_`` for ``args[1]``).
        own = {**dict(gm.named_parameters(remove_duplicate=False)), **dict(gm.named_buffers(remove_duplicate=False))}
        recorded["inputs"] = [*own.values(), *example_inputs]
        recorded["sources"] = [*own, *(n.name for n in gm.graph.nodes if n.op == "placeholder")]
        return _stop

    # Dynamo caches compiled code on the code object of the frame it compiles. A fresh copy of the entry's code per
    # export keeps those entries off the model's own code and off any shared code, and they go away with the copy
    # (EX-10); it also means repeated exports never run into Dynamo's recompile limit.
    entry = types.FunctionType(_call_model.__code__.replace(), _call_model.__globals__, _call_model.__name__)
    compiled = torch.compile(entry, backend=backend, fullgraph=True, dynamic=dynamic)
    # A forced AOTAutograd cache hit would skip ``keep`` and leave nothing recorded.
    no_cache = _torch.functorch_config().patch(force_autograd_cache=False)
    # An export's dims depend on its own inputs alone (EX-11). Every copy of the entry has the code id of
    # ``_call_model``, so Dynamo's automatic dynamic shapes would read the sizes that earlier exports (of any model)
    # saw. And duck sizing would give two dims of one size one symbol: the graph would then read one for the other
    # (wrong at other sizes: ``x + x.shape[1]`` exported at 4x4 adds the batch), or tie a batch equal to a feature
    # size to that size. The graph has no guards to catch either, so each dim gets its own symbol.
    no_history = _torch.dynamo_config().patch(automatic_dynamic_shapes=False)
    no_duck = _torch.symbolic_shapes_config().patch(use_duck_shape=False)
    with torch.no_grad(), no_cache, no_history, no_duck:
        try:
            compiled(model, args, kwargs)
        except _GraphCaptured:
            pass
    if "gm" not in recorded:
        raise ValueError(
            f"model {type(model).__name__} runs no tensor operation on the example inputs, so there is no graph to "
            "export; pass the inputs the model computes with as dynamo_export(*args, model=..., **kwargs)"
        )
    return _classify(model, args, kwargs, recorded["gm"], recorded["inputs"], recorded["sources"])


def _classify(
    model: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any], gm: torch.fx.GraphModule,
    values: list[Any], sources: list[str],
) -> CapturedGraph:
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(values):
        raise RuntimeError(f"internal: {len(placeholders)} graph placeholders for {len(values)} captured inputs")
    leaves, _ = _torch.pytree().tree_flatten_with_path((args, kwargs))
    user_tensors = {
        id(v): (i, _path_name(path)) for i, (path, v) in enumerate(leaves) if isinstance(v, torch.Tensor)
    }
    model_tensors: dict[int, str] = {}
    for fqn, t in [*model.named_parameters(remove_duplicate=False), *model.named_buffers(remove_duplicate=False)]:
        model_tensors.setdefault(id(t), fqn)

    captured = CapturedGraph(gm)
    symbols: list[tuple[torch.fx.Node, Any, str]] = []
    constants = 0
    for node, value, source in zip(placeholders, values, sources):
        if isinstance(value, torch.Tensor) and id(value) in user_tensors:
            position, name = user_tensors[id(value)]
            captured.inputs.append(GraphInput(USER, name, value, node, position))
        elif isinstance(value, torch.Tensor) and id(value) in model_tensors:
            captured.inputs.append(GraphInput(WEIGHT, model_tensors[id(value)], value, node))
        elif isinstance(value, torch.Tensor):
            captured.inputs.append(GraphInput(CONSTANT, f"constant_{constants}", value, node))
            constants += 1
        else:
            symbols.append((node, value, source))
    for node in gm.graph.nodes:
        if node.op == "get_attr":
            value = _get_attr(gm, node.target)
            if isinstance(value, torch.Tensor):
                captured.inputs.append(GraphInput(CONSTANT, f"constant_{constants}", value, node))
                constants += 1
    for node, value, source in symbols:
        if not _read_size_from_inputs(gm, node, captured.inputs):
            # A symbolic int the user passed (dynamic=True makes int arguments symbolic): a scalar input.
            name = m.group(1) if (m := re.fullmatch(r"l_((?:args|kwargs)_.*)_", source)) else node.name
            captured.inputs.append(GraphInput(USER, name, value, node, len(leaves)))
    captured.inputs.sort(key=lambda i: (i.role != USER, i.position))  # stable: weights and constants keep order
    return captured


def _get_attr(gm: torch.nn.Module, target: str) -> Any:
    obj: Any = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def _path_name(path: tuple[Any, ...]) -> str:
    """``(args, kwargs)`` key path -> op name: ``args_0``, ``kwargs_mask``, ``args_1_0``."""
    parts = ["args" if path[0].idx == 0 else "kwargs"]
    for key in path[1:]:
        parts.append(str(getattr(key, "idx", getattr(key, "key", getattr(key, "name", key)))))
    return re.sub(r"[^\w.]", "_", "_".join(parts))


def _read_size_from_inputs(gm: torch.fx.GraphModule, node: torch.fx.Node, inputs: list[GraphInput]) -> bool:
    """Replace a lifted size symbol by ``aten.sym_size.int`` of an input tensor that has it; False if none does."""
    if not node.users:
        gm.graph.erase_node(node)
        return True
    symbol = node.meta.get("val")
    if not isinstance(symbol, torch.SymInt):
        return False
    for graph_input in sorted(inputs, key=lambda i: i.role != USER):
        fake = graph_input.node.meta.get("val")
        if not isinstance(fake, torch.Tensor) or graph_input.node.op != "placeholder":
            continue
        for dim, size in enumerate(fake.shape):
            if isinstance(size, torch.SymInt) and size.node.expr == symbol.node.expr:
                first_op = next(n for n in gm.graph.nodes if n.op != "placeholder")
                with gm.graph.inserting_before(first_op):
                    size_node = gm.graph.call_function(torch.ops.aten.sym_size.int, (graph_input.node, dim))
                size_node.meta["val"] = size
                node.replace_all_uses_with(size_node)
                gm.graph.erase_node(node)
                return True
    return False


def process_groups(gm: torch.fx.GraphModule) -> list[str]:
    """EX-4/EX-5: names of the process groups the graph's collectives use, in order of first use."""
    names: list[str] = []
    for node in gm.graph.nodes:
        if node.op != "call_function" or not isinstance(node.target, _torch.op_overload()):
            continue
        # an OpOverload (the seam returns its class as a plain `type`)
        schema = [a.name for a in node.target._schema.arguments]  # type: ignore[attr-defined]
        for name, value in [*zip(schema, node.args), *node.kwargs.items()]:
            if name == "group_name" and isinstance(value, str) and value not in names:
                names.append(value)
    return names
