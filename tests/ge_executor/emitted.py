"""The GE op types the reference's exporter can write, derived from its code (never a hand list), and the op types
of GE graphs that upstream TorchAir emitted (read from the graphs themselves).

Starting from every function of the lowering table (``torchair_ref.export.lowering.LOWERINGS``) and the exporter's
own writers of graph-level ops (``Builder.data``, ``Builder.net_output``, the ``weights`` module), the source is
walked with ``ast``: an op type is the first argument of a ``<builder>.one(...)``/``<builder>.op(...)`` call, the
``type=`` of an ``OpDef(...)``, or a string assigned to ``<op>.type``. Calls into other functions of the exporter
(module helpers, ``Builder`` methods such as ``cast`` or ``int_list``, factories such as ``_unary("Relu")``) are
followed, with string arguments and closure variables bound, so an op type written through a helper is found too.
An op-type argument that is neither a literal nor bound to one is an error naming the function and line: the walk
never silently misses an op.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

EXPORTER = "torchair_ref.export"
SINKS = ("one", "op")  # Builder methods whose first argument is the op type written


class UnresolvedOpType(AssertionError):
    """The walk met an op type it cannot tell from the source: the function and line are named."""


def _source(fn: Callable[..., Any]) -> ast.AST:
    return ast.parse(textwrap.dedent(inspect.getsource(fn)))


def _is_exporter(obj: Any) -> bool:
    return callable(obj) and (getattr(obj, "__module__", "") or "").startswith(EXPORTER)


class _Walk:
    """What each function writes, memoised by its code and the strings bound in it."""

    def __init__(self, builder: type) -> None:
        self.builder = builder
        self.memo: dict[tuple[Any, frozenset[tuple[str, str]]], set[str]] = {}

    def function(self, fn: Callable[..., Any], bound: Mapping[str, str]) -> set[str]:
        """The op types ``fn`` (called with ``bound`` string arguments) writes, directly or through helpers."""
        fn = inspect.unwrap(fn)
        closed = {k: v for k, v in inspect.getclosurevars(fn).nonlocals.items() if isinstance(v, str)}
        key = (fn.__code__, frozenset({**closed, **bound}.items()))  # closures of one factory share their code
        if key in self.memo:
            return self.memo[key]
        found: set[str] = set()
        self.memo[key] = found  # a recursive call sees what is found so far
        names: dict[str, Any] = dict(fn.__globals__)
        names.update(inspect.getclosurevars(fn).nonlocals)
        names.update(bound)
        where = f"{fn.__module__}.{fn.__qualname__} ({inspect.getsourcefile(fn)}:{fn.__code__.co_firstlineno})"
        for node in ast.walk(_source(fn)):
            if isinstance(node, ast.Call):
                found |= self._call(node, names, where)
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "type"
                                                      for t in node.targets):
                found.add(self._string(node.value, names, where))
        return found

    def _string(self, node: ast.AST, names: Mapping[str, Any], where: str) -> str:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name) and isinstance(names.get(node.id), str):
            return names[node.id]
        raise UnresolvedOpType(f"{where}: cannot tell the GE op type `{ast.unparse(node)}` it writes; write it as a "
                               "string literal or pass one to the helper")

    def _call(self, node: ast.Call, names: Mapping[str, Any], where: str) -> set[str]:
        func = node.func
        found = set()
        for keyword in node.keywords:
            if keyword.arg == "type" and isinstance(func, ast.Attribute) and func.attr == "OpDef":
                if isinstance(keyword.value, ast.Name) and keyword.value.id not in names:
                    continue  # Builder.op's own OpDef(type=op_type): its callers name the type
                found.add(self._string(keyword.value, names, where))
        if isinstance(func, ast.Attribute) and func.attr in SINKS:
            return found | ({self._string(node.args[0], names, where)} if node.args else set())
        if isinstance(func, ast.Attribute) and inspect.isfunction(getattr(self.builder, func.attr, None)):
            return found | self.function(getattr(self.builder, func.attr), {})
        if isinstance(func, ast.Call):  # a factory called at once: _binary("Add")(b, node, x, y)
            return found | self._call(func, names, where)
        target = names.get(func.id) if isinstance(func, ast.Name) else None
        if inspect.isfunction(target) and _is_exporter(target):
            found |= self.function(target, self._bind(target, node, names))
        return found

    @staticmethod
    def _bind(fn: types.FunctionType, node: ast.Call, names: Mapping[str, Any]) -> dict[str, str]:
        """The string arguments of a call, by the callee's parameter names (what a factory closes over)."""
        params = list(inspect.signature(fn).parameters)
        bound = {}
        pairs = [*zip(params, node.args), *((k.arg, k.value) for k in node.keywords if k.arg)]
        for name, arg in pairs:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                bound[name] = arg.value
            elif isinstance(arg, ast.Name) and isinstance(names.get(arg.id), str):
                bound[name] = names[arg.id]
        return bound


def _label(target: Any) -> str:
    return str(target) if not callable(target) or hasattr(target, "_schema") else getattr(target, "__name__", str(
        target))


def exporter_op_types() -> dict[str, set[str]]:
    """Every GE op type the reference's exporter can write -> the ATen operators (or exporter parts) that write it."""
    from torchair_ref.export import weights
    from torchair_ref.export.ge_build import Builder
    from torchair_ref.export.lowering import LOWERINGS

    walk = _Walk(Builder)
    roots: Iterable[tuple[str, Callable[..., Any]]] = [
        *((_label(target), lower) for target, lower in LOWERINGS.items()),
        ("Builder.data", Builder.data), ("Builder.net_output", Builder.net_output),
        *((f"weights.{name}", fn) for name, fn in vars(weights).items()
          if inspect.isfunction(fn) and fn.__module__ == weights.__name__)]
    found: dict[str, set[str]] = {}
    for origin, fn in roots:
        for op_type in walk.function(fn, {}):
            found.setdefault(op_type, set()).add(origin)
    return found


def graph_op_types(folders: Iterable[Path]) -> dict[str, set[str]]:
    """Every op type of the serialized ``ModelDef`` files (``*.pb``) in ``folders`` -> the files that hold it.

    Such folders are what upstream's CPU adapter writes under ``$TORCHAIR_CPU_GE_GRAPHS``: every graph upstream's
    converters built and handed to its graph handle, including those the executor refused."""
    from ge_executor import ge_ir

    found: dict[str, set[str]] = {}
    for folder in folders:
        for path in sorted(Path(folder).glob("*.pb")):
            model = ge_ir.ModelDef.FromString(path.read_bytes())
            for graph in model.graph:
                for op in graph.op:
                    found.setdefault(op.type, set()).add(path.name)
    return found
