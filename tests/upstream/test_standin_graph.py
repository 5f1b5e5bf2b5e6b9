"""IMPL-4: upstream's native graph handle stand-in runs its graph on the GE executor, as upstream calls it
(core/_backend.py:177-212: load, set_hint_shape, compile, run((inputs, assigned_outputs, stream)))."""

from __future__ import annotations

import pytest
import torch

from ge_executor import GeExecutorError, UnsupportedOpError, ge_ir
from tests.ge_executor.graphs import Builder
from torchair_cpu.standins._graph import TorchNpuGraphBase


def _model(op_type: str = "Relu") -> bytes:
    b = Builder()
    b.op("NetOutput", [f"{b.op(op_type, [b.data(torch.ones(2))])}:0"])
    return ge_ir.ModelDef(graph=[b.graph]).SerializeToString()


def _loaded(op_type: str = "Relu", output_dtypes=(0,)) -> TorchNpuGraphBase:
    graph = TorchNpuGraphBase("g")
    graph.load(_model(op_type), {}, [1], list(output_dtypes), 0)
    graph.set_hint_shape([[2]], [[2]])
    graph.compile()
    return graph


def test_load_compile_run_returns_a_list_and_fills_assigned_outputs():
    graph = _loaded()
    x = torch.tensor([-1.0, 2.0])
    assert [t.tolist() for t in graph.run(([x], [], None))] == [[0.0, 2.0]]
    target = torch.empty(2)
    (out,) = graph.run(([x], [target], None))
    assert out is target and target.tolist() == [0.0, 2.0]


def test_declared_output_dtypes_are_checked():
    graph = _loaded(output_dtypes=(ge_ir.CPP_DATA_TYPES["DT_INT32"],))
    with pytest.raises(GeExecutorError, match="output dtypes"):
        graph.run(([torch.ones(2)], [], None))


def test_unknown_op_fails_at_load_and_an_unloaded_graph_cannot_run():
    with pytest.raises(UnsupportedOpError, match="no CPU kernel for op Erfinv"):
        TorchNpuGraphBase("g").load(_model("Erfinv"), {}, [1], [0], 0)
    with pytest.raises(GeExecutorError, match="was not loaded"):
        TorchNpuGraphBase("g").run(([torch.ones(2)], [], None))
