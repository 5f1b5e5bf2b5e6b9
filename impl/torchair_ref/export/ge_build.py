"""FX (ATen) graph -> GE IR GraphDef (EX-7, EX-9): the walk over the graph that calls the lowerings.

- ``Data`` for each graph input: user inputs first, in the order of ``(args, kwargs)``, named by their path in it
  (``args_0``, ``kwargs_mask``); then the model's own parameters and buffers, named by fqn; then any other tensor the
  graph captured, named ``constant_<k>``. The latter two are turned into ``Const``/``FileConstant`` by ``weights.py``.
- Each ATen node is lowered by the entry of ``lowering.LOWERINGS`` for its operator to the GE op (or small group of
  ops) upstream's converters emit for it: GE op types, GE's input order and attrs (``Value``/``Builder.op``). An
  operator without an entry raises ``UnsupportedOperatorError`` naming it and where the model calls it, so no op of
  an invented type is ever written.
- Symbolic sizes are computed in the graph with GE's ops as upstream does: ``Shape`` + ``Gather`` for a size of an
  input, ``Mul``/``Add`` for arithmetic on sizes, ``Pack`` to build a shape list that holds one.
- One ``NetOutput`` takes the graph's outputs as inputs.

The op-building API itself (``Value``, the base ``Builder``, ``spec_of``, ``where``) is ``op_builder.py``, which the
lowering tables import; this module imports the tables, so the two form no circle.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import torch.fx

from ge_executor import ge_ir
from torchair_ref import _torch

from . import op_builder
from .capture import CapturedGraph, GraphInput
from .lowering import LOWERINGS
from .op_builder import COVERAGE_DOC, UnsupportedOperatorError, Value, spec_of, where

__all__ = ["COVERAGE_DOC", "Builder", "UnsupportedOperatorError", "Value", "build_graph", "spec_of", "where"]


class Builder(op_builder.Builder):
    """The op-building API (op_builder.Builder) and the walk over an FX graph: a ``Data`` op an input, the lowering of
    each call, one ``NetOutput``."""

    # ------------------------------------------------------------------------------------------------ the walk

    def data(self, graph_input: GraphInput) -> str:
        fake = graph_input.node.meta.get("val")
        dtype, shape = spec_of(fake if fake is not None else graph_input.value)
        value = self.one("Data", [], dtype, shape, {"index": self.data_ops}, name=graph_input.name)
        self.data_ops += 1
        self.values[graph_input.node] = value
        return value.op

    def call(self, node: torch.fx.Node) -> None:
        source = node.args[0] if node.args else None
        if node.target is operator.getitem and isinstance(source, torch.fx.Node) \
                and isinstance(self.values.get(source), list):
            self.values[node] = self.values[source][node.args[1]]
            return
        lower = lowering_of(node.target)
        if lower is None:
            raise UnsupportedOperatorError(
                f"dynamo_export: operator {_target_name(node.target)} has no GE lowering in the reference, so the "
                f"graph cannot be written with GE op types (EX-7); it is called at {where(node)}. Rewrite that code "
                f"with supported operators (the ATen operators upstream converts and which the reference lowers: "
                f"{COVERAGE_DOC}) or add a lowering to torchair_ref.export.lowering.")
        pytree = _torch.pytree()
        args = pytree.tree_map(self._arg, node.args)
        kwargs = pytree.tree_map(self._arg, dict(node.kwargs))
        self.node = node
        try:
            self.values[node] = lower(self, node, *args, **kwargs)
        finally:
            self.node = None

    def _arg(self, value: Any) -> Any:
        if isinstance(value, torch.fx.Node):
            return self.values[value]
        return value

    def net_output(self, node: torch.fx.Node) -> None:
        leaves = [self.values[v] for v in _torch.pytree().tree_leaves(node.args) if isinstance(v, torch.fx.Node)]
        if not leaves:
            raise ValueError("the model returns no tensor, so the exported graph would have no output")
        self.op("NetOutput", [(f"x{k}", v) for k, v in enumerate(leaves)], [])


def lowering_of(target: Any) -> Callable[..., Any] | None:
    """EX-7: the lowering of an fx node's target, None when there is none. A library's custom op (not in
    torch.ops until that library is imported) is in the table by its name."""
    return LOWERINGS.get(target) or LOWERINGS.get(_target_name(target))


def _target_name(target: Any) -> str:
    if isinstance(target, str):  # a lowering table's key for a library's custom op: its name already
        return target
    if isinstance(target, (_torch.op_overload(), _torch.higher_order_operator())):
        # a HigherOrderOperator (the seam returns its class as a plain `type`)
        return str(target) if isinstance(target, _torch.op_overload()) else target.name()  # type: ignore[attr-defined]
    module = getattr(target, "__module__", None) or type(target).__module__
    return f"{module.removeprefix('_')}.{getattr(target, '__qualname__', repr(target))}"



def build_graph(captured: CapturedGraph, *, record_module_stack: bool = False) -> tuple[Any, list[str]]:
    """EX-7/EX-9: the GE GraphDef of a captured graph and the names of the ``Data`` ops of ``captured.inputs``.

    Weights and constants are still ``Data`` ops here; ``weights.py`` replaces them.
    """
    graph = ge_ir.GraphDef(name="graph")
    builder = Builder(graph, record_module_stack)
    op_names = [builder.data(graph_input) for graph_input in captured.inputs]
    for node in captured.gm.graph.nodes:
        if node.op == "call_function":
            builder.call(node)
        elif node.op == "output":
            builder.net_output(node)
        elif node.op not in ("placeholder", "get_attr"):
            raise NotImplementedError(f"FX node {node.name} of kind {node.op} has no GE form")
    return graph, op_names
