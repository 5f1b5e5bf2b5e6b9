"""Whole-model capture with Dynamo and its conversion to a GE IR GraphDef (EX-1, EX-7, EX-8, EX-9).

Capture: the model is called through a throwaway entry function compiled with ``torch.compile(fullgraph=True,
dynamic=...)`` into a backend that only records. The backend runs AOTAutograd in inference mode (grad disabled), so
the recorded graph is functional ATen with every parameter, buffer and input as a placeholder; it then returns a stub
that raises, so the model itself never runs (export costs one trace, not a forward pass, and collectives are not
executed).

Conversion, one GE op per FX node:

- ``Data`` for each graph input: user inputs first, in the order of ``(args, kwargs)``, named by their path in it
  (``args_0``, ``kwargs_mask``); then the model's own parameters and buffers, named by fqn; then any other tensor the
  graph captured (a global, a plain tensor attribute, a ``torch.tensor(...)`` literal), named ``constant_<k>``. The
  latter two are turned into ``Const``/``FileConstant`` by ``weights.py``.
- An ATen node becomes an op whose type is the operator (``aten.addmm.default``). Tensor and symbolic-int arguments
  are inputs ``"<src op>:<output index>"``, with ``input_desc[i].name`` = the schema argument name (list elements get
  their position appended: ``tensors0``). Every other argument given in the graph is an attr under its schema name
  (int ``i``, float ``f``, bool ``b``, str ``s``, dtype ``dt``, lists as ``list``; devices, layouts and memory
  formats as their ``str``). Arguments left at their defaults are not written.
- An int list that holds symbolic sizes (``view(x, [s0, -1])``) becomes a ``Pack`` op: attr ``values`` holds the
  list with ``0`` where a size is symbolic, attr ``symbolic_positions`` says which entries those are, and its inputs
  supply them in that order. ``operator.getitem`` on a multi-output op is an edge, not an op.
- Symbolic sizes that Dynamo lifts to graph inputs are read from the input tensors instead (``aten.sym_size.int``),
  so a ``dynamic=True`` export still has one ``Data`` per user input, with ``-1`` in its shape for symbolic dims.
- One ``NetOutput`` takes the graph's outputs as inputs.
"""

from __future__ import annotations

import operator
import re
import types
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx
import torch.utils._pytree as pytree
from google.protobuf import text_format
from google.protobuf.text_encoding import CEscape
from torch._functorch import config as functorch_config
from torch._functorch.aot_autograd import aot_module_simplified
from torch.fx.experimental.symbolic_shapes import is_concrete_int

from . import ge_ir

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


def _call_model(model: torch.nn.Module, args: tuple, kwargs: dict) -> Any:
    return model(*args, **kwargs)


def _stop(*_args: Any) -> None:
    raise _GraphCaptured


def capture(model: torch.nn.Module, args: tuple, kwargs: dict, *, dynamic: bool) -> CapturedGraph:
    """EX-1: trace ``model(*args, **kwargs)`` as one graph (a graph break raises) into an ATen inference graph."""
    recorded: dict[str, Any] = {}

    def backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        def keep(aten_gm: torch.fx.GraphModule, _inputs: Any) -> torch.fx.GraphModule:
            recorded["gm"] = aten_gm
            return aten_gm

        aot_module_simplified(gm, example_inputs, fw_compiler=keep)
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
    with torch.no_grad(), functorch_config.patch(force_autograd_cache=False):
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
    model: torch.nn.Module, args: tuple, kwargs: dict, gm: torch.fx.GraphModule, values: list[Any], sources: list[str]
) -> CapturedGraph:
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(values):
        raise RuntimeError(f"internal: {len(placeholders)} graph placeholders for {len(values)} captured inputs")
    leaves, _ = pytree.tree_flatten_with_path((args, kwargs))
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


def _path_name(path: tuple) -> str:
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
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
            continue
        for name, value in _arguments(node):
            if name == "group_name" and isinstance(value, str) and value not in names:
                names.append(value)
    return names


# ---------------------------------------------------------------------------------------------------- FX -> GE IR


def _op_type(target: Any) -> str:
    if isinstance(target, torch._ops.OpOverload):
        return str(target)
    if isinstance(target, torch._ops.HigherOrderOperator):
        return target.name()
    module = getattr(target, "__module__", None) or type(target).__module__
    return f"{module.removeprefix('_')}.{getattr(target, '__qualname__', repr(target))}"


def _arguments(node: torch.fx.Node) -> Iterable[tuple[str, Any]]:
    schema = getattr(node.target, "_schema", None)
    names = [a.name for a in schema.arguments] if schema is not None else []
    for i, value in enumerate(node.args):
        yield (names[i] if i < len(names) else f"arg{i}"), value
    yield from node.kwargs.items()


def _schema_types(node: torch.fx.Node) -> dict[str, str]:
    schema = getattr(node.target, "_schema", None)
    return {a.name: str(a.type) for a in schema.arguments} if schema is not None else {}


def _desc(value: Any) -> Any:
    """The descriptor of one output: a tensor's dtype and shape (-1 for symbolic dims); scalars have shape []."""
    desc = ge_ir.TensorDescriptor(layout="ND")
    if isinstance(value, torch.Tensor):
        desc.dtype = ge_ir.proto_dtype(value.dtype)
        desc.shape.dim.extend(int(d) if is_concrete_int(d) else -1 for d in value.shape)
    elif isinstance(value, (bool, torch.SymBool)):
        desc.dtype = ge_ir.DataType.Value("DT_BOOL")
    elif isinstance(value, (int, torch.SymInt)):
        desc.dtype = ge_ir.DataType.Value("DT_INT64")
    elif isinstance(value, (float, torch.SymFloat)):
        desc.dtype = ge_ir.DataType.Value("DT_DOUBLE")
    return desc


_LIST_KINDS = (  # (element test, ListValue field, ListValueType name), first match wins
    (lambda v: isinstance(v, bool), "b", "VT_LIST_BOOL"),
    (lambda v: isinstance(v, int) and not isinstance(v, bool), "i", "VT_LIST_INT"),
    (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "f", "VT_LIST_FLOAT"),
    (lambda v: isinstance(v, str), "s", "VT_LIST_STRING"),
    (lambda v: isinstance(v, torch.dtype), "dt", "VT_LIST_DATA_TYPE"),
)
_EMPTY_LIST_KINDS = {"int": "VT_LIST_INT", "SymInt": "VT_LIST_INT", "float": "VT_LIST_FLOAT", "bool": "VT_LIST_BOOL",
                     "str": "VT_LIST_STRING"}  # fmt: skip


def set_attr(attr: Any, value: Any, schema_type: str = "") -> bool:
    """Store a non-tensor argument in an AttrDef; False (nothing stored) for None."""
    if value is None:
        return False
    if isinstance(value, bool):
        attr.b = value
    elif isinstance(value, int):
        attr.i = value
    elif isinstance(value, float):
        attr.f = value
    elif isinstance(value, str):
        attr.s = value.encode()
    elif isinstance(value, torch.dtype):
        attr.dt = ge_ir.cpp_dtype(value)
    elif isinstance(value, (list, tuple)):
        lst = attr.list
        if not value:
            element = re.sub(r"[\[\]?]|List|Optional", "", schema_type)
            lst.val_type = ge_ir.ListValueType.Value(_EMPTY_LIST_KINDS.get(element, "VT_LIST_NONE"))
            return True
        for test, fname, kind in _LIST_KINDS:
            if all(test(v) for v in value):
                values = [ge_ir.cpp_dtype(v) for v in value] if fname == "dt" else value
                values = [v.encode() for v in values] if fname == "s" else values
                getattr(lst, fname).extend(values)
                lst.val_type = ge_ir.ListValueType.Value(kind)
                return True
        attr.ClearField("list")
        attr.s = repr(value).encode()
    else:  # device, layout, memory_format, complex, ...: their text
        attr.s = str(value).encode()
    return True


def module_stack_text(stack: dict[str, tuple[str, Any]]) -> str:
    """EX-9: one line per enclosing module, outermost first: ``<fqn>: <module type>``; the root's line is its type."""
    lines = []
    for path, module_type in stack.values():
        fqn = re.sub(r"^L\['\w+'\]\.?", "", path)
        if isinstance(module_type, type):
            module_type = f"{module_type.__module__}.{module_type.__qualname__}"
        lines.append(f"{fqn}: {module_type}" if fqn else str(module_type))
    return "\n".join(lines)


class _Builder:
    def __init__(self, graph: Any, record_module_stack: bool) -> None:
        self.graph = graph
        self.record_module_stack = record_module_stack
        self.names: set[str] = set()
        self.src: dict[torch.fx.Node, tuple[str, int]] = {}  # value node -> (op name, output index)
        self.multi: dict[torch.fx.Node, str] = {}  # node with several outputs -> op name
        self.descs: dict[tuple[str, int], Any] = {}
        self.data_ops = 0

    def unique(self, name: str) -> str:
        candidate, k = name, 0
        while candidate in self.names:
            k += 1
            candidate = f"{name}_{k}"
        self.names.add(candidate)
        return candidate

    def emit(self, op: Any, outputs: list[Any]) -> None:
        for i, value in enumerate(outputs):
            desc = _desc(value)
            op.output_desc.append(desc)
            self.descs[(op.name, i)] = desc
        op.id = len(self.graph.op)
        self.graph.op.extend([op])

    def source(self, node: torch.fx.Node) -> tuple[str, int]:
        if node in self.multi:
            raise NotImplementedError(f"FX node {node.name} has several outputs and is used whole")
        return self.src[node]

    def connect(self, op: Any, src: tuple[str, int], name: str) -> None:
        op.input.append(f"{src[0]}:{src[1]}")
        desc = ge_ir.TensorDescriptor()
        desc.CopyFrom(self.descs[src])
        desc.name = name
        op.input_desc.append(desc)

    def data(self, graph_input: GraphInput) -> str:
        op = ge_ir.OpDef(name=self.unique(graph_input.name), type="Data")
        op.attr["index"].i = self.data_ops
        self.data_ops += 1
        fake = graph_input.node.meta.get("val")
        self.emit(op, [fake if fake is not None else graph_input.value])
        self.src[graph_input.node] = (op.name, 0)
        return op.name

    def call(self, node: torch.fx.Node) -> None:
        if node.target is operator.getitem and node.args[0] in self.multi:
            self.src[node] = (self.multi[node.args[0]], node.args[1])
            return
        op = ge_ir.OpDef(type=_op_type(node.target))
        schema_types = _schema_types(node)
        for arg_name, value in _arguments(node):
            nodes = [v for v in pytree.tree_leaves(value) if isinstance(v, torch.fx.Node)]
            if isinstance(value, torch.fx.Node):
                self.connect(op, self.source(value), arg_name)
            elif nodes and all(isinstance(v, torch.fx.Node) or v is None for v in value):
                for k, v in enumerate(value):
                    if v is not None:
                        self.connect(op, self.source(v), f"{arg_name}{k}")
            elif nodes:
                self.connect(op, self.pack(f"{node.name}_{arg_name}", value), arg_name)
            elif not set_attr(op.attr[arg_name], value, schema_types.get(arg_name, "")):
                del op.attr[arg_name]
        op.name = self.unique(node.name)  # after any Pack op it needed, so that ops stay in topological order
        stack = node.meta.get("nn_module_stack")
        if self.record_module_stack and stack:
            op.attr["nn_module_stack"].s = module_stack_text(stack).encode()
        val = node.meta.get("val")
        outputs = list(val) if isinstance(val, (list, tuple)) else [val]
        self.emit(op, outputs)
        if isinstance(val, (list, tuple)):
            self.multi[node] = op.name
        else:
            self.src[node] = (op.name, 0)

    def pack(self, name: str, values: list[Any]) -> tuple[str, int]:
        op = ge_ir.OpDef(name=self.unique(f"{name}_pack"), type="Pack")
        positions = [k for k, v in enumerate(values) if isinstance(v, torch.fx.Node)]
        for k in positions:
            self.connect(op, self.source(values[k]), f"x{k}")
        set_attr(op.attr["values"], [0 if k in positions else int(v) for k, v in enumerate(values)])
        set_attr(op.attr["symbolic_positions"], positions)
        self.emit(op, [torch.empty(len(values), dtype=torch.int64, device="meta")])
        return (op.name, 0)

    def net_output(self, node: torch.fx.Node) -> None:
        op = ge_ir.OpDef(name=self.unique("NetOutput"), type="NetOutput")
        for k, value in enumerate(v for v in pytree.tree_leaves(node.args) if isinstance(v, torch.fx.Node)):
            self.connect(op, self.source(value), f"x{k}")
        if not op.input:
            raise ValueError("the model returns no tensor, so the exported graph would have no output")
        self.emit(op, [])


def build_graph(captured: CapturedGraph, *, record_module_stack: bool = False) -> tuple[Any, list[str]]:
    """EX-7/EX-9: the GE GraphDef of a captured graph and the names of the ``Data`` ops of ``captured.inputs``.

    Weights and constants are still ``Data`` ops here; ``weights.py`` replaces them.
    """
    graph = ge_ir.GraphDef(name="graph")
    builder = _Builder(graph, record_module_stack)
    op_names = [builder.data(graph_input) for graph_input in captured.inputs]
    for node in captured.gm.graph.nodes:
        if node.op == "call_function":
            builder.call(node)
        elif node.op == "output":
            builder.net_output(node)
        elif node.op not in ("placeholder", "get_attr"):
            raise NotImplementedError(f"FX node {node.name} of kind {node.op} has no GE form")
    return graph, op_names


# ----------------------------------------------------------------------------------------------- dynamo.pbtxt


def _quote(text: str) -> str:
    return '"' + CEscape(text, as_utf8=True) + '"'


def _message_lines(message: Any, indent: int) -> list[str]:
    return text_format.MessageToString(message, as_utf8=True, indent=indent).splitlines()


def _attr_lines(attr: Any, indent: int) -> list[str]:
    pad = " " * indent
    kind = attr.WhichOneof("value")
    if kind == "dt":
        return [f"{pad}dt: {_dtype_name(attr.dt)}"]
    if kind == "t":
        return [
            f"{pad}t {{",
            f"{pad}  desc {{",
            *_message_lines(attr.t.desc, indent + 4),
            f"{pad}  }}",
            f"{pad}  # data: {len(attr.t.data)} bytes, in the .air file",
            f"{pad}}}",
        ]
    if kind == "list" and attr.list.dt:
        rest = ge_ir.ListValue()
        rest.CopyFrom(attr.list)
        rest.ClearField("dt")
        dts = [f"{pad}  dt: {_dtype_name(v)}" for v in attr.list.dt]
        return [f"{pad}list {{", *dts, *_message_lines(rest, indent + 2), f"{pad}}}"]
    return _message_lines(attr, indent)


def _dtype_name(value: int) -> str:
    """A ``dt`` attr's type by name: ``dt`` attrs hold GE's C++ numbering, not the protobuf enum (GE_IR.md)."""
    return ge_ir.cpp_dtype_name(value) or str(value)


def to_pbtxt(graph: Any) -> str:
    """EX-8: the readable dump, one ``node { name op input attr output_desc }`` block per op.

    Dtypes appear by name (``dtype: DT_BF16`` in output descs, ``dt: DT_BF16`` in attrs, each read in its own
    numbering). Tensor data of ``Const`` ops is left out (a comment gives its size) so that the dump stays readable.
    """
    lines: list[str] = []
    for op in graph.op:
        lines += ["node {", f"  name: {_quote(op.name)}", f"  op: {_quote(op.type)}"]
        lines += [f"  input: {_quote(i)}" for i in op.input]
        for key in sorted(op.attr):
            value = _attr_lines(op.attr[key], 6)
            lines += ["  attr {", f"    key: {_quote(key)}", "    value {", *value, "    }", "  }"]
        for desc in op.output_desc:
            lines += ["  output_desc {", *_message_lines(desc, 4), "  }"]
        lines.append("}")
    return "\n".join(lines) + "\n"
