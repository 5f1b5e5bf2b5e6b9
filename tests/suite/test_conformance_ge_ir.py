"""Tests of the suite's own GE IR reading (torchair_conformance/ge_ir.py, torchair_conformance/assertions.py): the two
numberings of
data types and what counts as an edge (GE_IR.md; SPEC EX-6, EX-7)."""

from __future__ import annotations

import pytest
import torch

from torchair_conformance import assertions, ge_ir


def _graph(*ops):
    graph = ge_ir.GraphDef(name="g")
    for name, kind, inputs in ops:
        graph.op.add(name=name, type=kind, input=inputs)
    return graph


def test_an_empty_input_is_an_omitted_optional_input_not_an_edge():
    """EX-7: GE's op builders write "" for an omitted optional input; the edge check accepts it."""
    graph = _graph(("x", "Data", []), ("norm", "LayerNorm", ["x:0", "", ""]), ("out", "NetOutput", ["norm:0"]))
    assertions.assert_edges_resolve(graph, what="optional inputs")


@pytest.mark.parametrize("edge", ["gone:0", "x", "x:one", ":0", " "])
def test_a_real_dangling_edge_still_fails(edge):
    """EX-7: an input naming no op of the graph (or no output index) is still reported, beside "" inputs."""
    graph = _graph(("x", "Data", []), ("add", "Add", ["x:0", "", edge]), ("out", "NetOutput", ["add:0"]))
    with pytest.raises(AssertionError, match="name no op of the graph") as failure:
        assertions.assert_edges_resolve(graph, what="dangling")
    assert repr(edge) in str(failure.value), str(failure.value)


def test_control_edges_still_resolve():
    """EX-7: ``<op>:-1`` is a control edge to an op of the graph."""
    assertions.assert_edges_resolve(_graph(("x", "Data", []), ("out", "NetOutput", ["x:0", "x:-1"])), what="ctrl")


@pytest.mark.parametrize(
    "dtype, proto, cpp",
    [(torch.float32, 1, 0), (torch.float16, 2, 1), (torch.int8, 3, 2), (torch.int32, 7, 3), (torch.uint8, 4, 4),
     (torch.int16, 5, 6), (torch.int64, 8, 9), (torch.float64, 12, 11), (torch.bool, 11, 12), (torch.bfloat16, 27, 27),
     (torch.complex64, 16, 16)],  # fmt: skip
)
def test_two_numberings_of_data_types(dtype, proto, cpp):
    """EX-6/EX-7: descriptors hold the protobuf enum, dt attrs GE's C++ ge::DataType (GE_IR.md)."""
    assert (ge_ir.proto_dtype(dtype), ge_ir.cpp_dtype(dtype)) == (proto, cpp)
    assert ge_ir.proto_dtype_name(proto) == ge_ir.cpp_dtype_name(cpp) == ge_ir.proto_dtype_name(dtype)


def test_float32_dt_zero_is_float_not_undefined():
    """EX-6: a float32 FileConstant carries dtype 0, which the protobuf enum would misread as DT_UNDEFINED."""
    assert ge_ir.cpp_dtype_name(0) == "DT_FLOAT" and ge_ir.proto_dtype_name(0) == "DT_UNDEFINED"


def _file_constant_graph(tmp_path, weight, dt):
    path = tmp_path / "w"
    path.write_bytes(weight.numpy().tobytes())
    graph = _graph(("w", "FileConstant", []), ("out", "NetOutput", ["w:0"]))
    op = graph.op[0]
    op.attr["shape"].list.i.extend(weight.shape)
    op.attr["dtype"].dt = dt
    op.attr["file_path"].s = str(path).encode()
    op.attr["file_id"].s = b""
    return graph


def test_file_constant_dtype_is_read_in_the_cpp_numbering(tmp_path):
    """EX-6: the suite accepts GE's C++ number for a FileConstant's dtype and rejects the protobuf one."""
    weight = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    weights = {"w": (weight, "w")}
    good = _file_constant_graph(tmp_path, weight, ge_ir.cpp_dtype(torch.float32))
    assert assertions.assert_weights_in_files(good, weights, tmp_path, cwd=tmp_path, what="cpp") == {"w"}
    bad = _file_constant_graph(tmp_path, weight, ge_ir.proto_dtype(torch.float32))
    with pytest.raises(AssertionError, match="GE's C\\+\\+ numbering"):
        assertions.assert_weights_in_files(bad, weights, tmp_path, cwd=tmp_path, what="proto")
