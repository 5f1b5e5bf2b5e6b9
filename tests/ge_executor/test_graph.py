"""IMPL-4: loading and checking GE graphs: edges, optional inputs, control edges, Const/FileConstant, errors."""

from __future__ import annotations

import pytest
import torch

import ge_executor as ge
from ge_executor import GeExecutorError, GraphCheckError, UnsupportedOpError, ge_ir
from tests.ge_executor.graphs import Builder


def test_const_values_round_trip():
    for value in (torch.tensor([[1.5, -2.0]]), torch.tensor([1, 2], dtype=torch.int64),
                  torch.tensor([True, False]), torch.tensor([0.5], dtype=torch.bfloat16)):
        b = Builder()
        assert torch.equal(b.output(b.const(value)).run([])[0], value)


def test_file_constant_reads_raw_bytes(tmp_path):
    weight = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    (tmp_path / "w").write_bytes(weight.numpy().tobytes())
    b = Builder()
    name = b.op("FileConstant", file_path=b"w", shape=[2, 3], dtype=torch.float32)
    b.op("NetOutput", [f"{name}:0"])
    graph = ge.load(b.graph, weights_dir=tmp_path)
    assert torch.equal(graph.run([])[0], weight)
    (tmp_path / "w").write_bytes(b"\0" * 4)
    with pytest.raises(GraphCheckError, match="holds 4 bytes"):
        graph.run([])
    with pytest.raises(GraphCheckError, match="weights_dir"):
        ge.load(b.graph).run([])


def test_control_edges_order_but_carry_no_data():
    b = Builder()
    x = b.data(torch.ones(2))
    first = b.op("Relu", [x])
    second = b.op("Tanh", [x, f"{first}:-1"])
    assert torch.equal(b.output(f"{second}:0").run([torch.ones(2)])[0], torch.tanh(torch.ones(2)))


def test_unknown_op_names_the_op_type():
    b = Builder()
    b.op("NetOutput", [f"{b.op('FlashAttentionScore', [b.data()])}:0"])
    with pytest.raises(UnsupportedOpError, match="needs CANN/GE: no CPU kernel for op FlashAttentionScore"):
        ge.load(b.graph)


def test_dangling_edge_and_cycle_are_rejected():
    b = Builder()
    b.op("NetOutput", [f"{b.op('Relu', ['nowhere:0'])}:0"])
    with pytest.raises(GraphCheckError, match="names no op"):
        ge.load(b.graph)
    b = Builder()
    b.op("Relu", ["Tanh_1:0"], name="Relu_0")
    b.op("Tanh", ["Relu_0:0"], name="Tanh_1")
    b.op("NetOutput", ["Tanh_1:0"])
    with pytest.raises(GraphCheckError, match="cycle"):
        ge.load(b.graph)


def test_data_desc_is_checked_at_run():
    b = Builder()
    graph = b.output(b.data(torch.ones(2, 3), dims=[-1, 3]))
    assert graph.run([torch.ones(5, 3)])[0].shape == (5, 3)
    with pytest.raises(GeExecutorError, match=r"shape \[-1, 3\]"):
        graph.run([torch.ones(5, 4)])
    with pytest.raises(GeExecutorError, match="DT_FLOAT"):
        graph.run([torch.ones(5, 3, dtype=torch.int32)])


def test_load_reads_bytes_and_parsed_messages_and_rejects_garbage():
    b = Builder()
    b.op("NetOutput", [b.const(torch.tensor([1.0]))])
    model = ge_ir.ModelDef(graph=[b.graph])
    for form in (model.SerializeToString(), model, b.graph):
        assert ge.load(form).run([])[0].tolist() == [1.0]
    with pytest.raises(GraphCheckError, match="not a serialized GE ModelDef"):
        ge.load(b"\xff\xff\xff")


def test_graph_input_passed_through_is_copied():
    b = Builder()
    x = torch.ones(2)
    out = b.output(b.data(x)).run([x])[0]
    assert torch.equal(out, x) and out.data_ptr() != x.data_ptr()
