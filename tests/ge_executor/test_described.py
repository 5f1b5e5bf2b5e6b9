"""EX-11, IMPL-4: what the graph runner checks around every kernel, as GE does: results against the static shapes
the graph describes (an op's output desc, the NetOutput's input descs), and the op's dtype signature (inputs that
one type variable types must agree)."""

from __future__ import annotations

import pytest
import torch

from ge_executor import ShapeMismatchError, UnsupportedDtypeError
from tests.ge_executor.graphs import Builder, run_op

X = torch.arange(12, dtype=torch.float32).reshape(6, 2)


def _slice(b: Builder, x: str, end: int, out_dims=()) -> str:
    """x[:end] along axis 0 as upstream's slice converter writes it: StridedSliceV2 with 0-d int64 operands."""
    operands = [b.const(torch.tensor(v)) for v in (0, end, 0, 1)]
    return b.op("StridedSliceV2", [x, *operands], out_dims=out_dims)


def test_a_static_output_desc_is_held_against_the_result():
    """RAW_OPS:79460 REG_OP(StridedSliceV2): the kernel clamps an end past the rows (as GE does), but when the op's
    output desc says [4, 2] a 2-row input gives a 2-row result, which GE's shape check rejects: so does the runner."""
    b = Builder()
    x = b.data(X, dims=[-1, 2])
    graph = b.output(f"{_slice(b, x, 4, out_dims=[[4, 2]])}:0")
    assert graph.run([X])[0].tolist() == X[:4].tolist()
    with pytest.raises(ShapeMismatchError, match=r"op StridedSliceV2 .*output 0 has shape \[2, 2\].*\[4, 2\]"):
        graph.run([X[:2]])


def test_a_described_graph_output_is_held_against_the_result_naming_its_op():
    """Upstream describes only Data and the graph outputs (the NetOutput's input descs, from the traced shapes):
    a graph traced with more rows than the slice bound describes [4, 2]; a warm call with 2 rows cannot give it."""
    b = Builder()
    x = b.data(X, dims=[-1, 2])
    doubled = b.op("Mul", [f"{_slice(b, x, 4)}:0", b.const(torch.tensor(2.0))])
    graph = b.output(f"{doubled}:0", dims=[[4, 2]])
    assert graph.run([X])[0].tolist() == (X[:4] * 2).tolist()
    with pytest.raises(ShapeMismatchError, match=r"graph output 0 \(op Mul .*\) has shape \[2, 2\].*\[4, 2\]"):
        graph.run([X[:2]])


@pytest.mark.parametrize("dims", [[], [-2], [-1, 2], [-1, -1]], ids=["no dims", "unknown rank", "one -1", "all -1"])
def test_a_desc_without_static_dims_describes_nothing_or_only_the_rank(dims):
    b = Builder()
    x = b.data(X, dims=[-1, 2])
    graph = b.output(f"{_slice(b, x, 4, out_dims=[dims])}:0")
    assert graph.run([X[:2]])[0].shape == (2, 2)


def test_a_described_rank_is_held_too():
    with pytest.raises(ShapeMismatchError, match=r"output 0 has shape \[2, 2\].*\[-1\]"):
        run_op("Relu", [X[:2]], out_dims=[[-1]])


def test_inputs_of_one_type_variable_must_agree_naming_op_and_both_dtypes():
    """RAW_OPS:11703 REG_OP(Add) with CANN's AddVerify (CheckTwoInputDtypeSame): a converter that forgets a Cast
    fails on an NPU, so it fails here, naming the op, the inputs and their dtypes."""
    with pytest.raises(UnsupportedDtypeError, match=r"op Add .*x1 is DT_FLOAT16, x2 is DT_FLOAT"):
        run_op("Add", [X.half(), X], in_names=["x1", "x2"])
    with pytest.raises(UnsupportedDtypeError, match=r"op Add .*input 0 is DT_FLOAT16, input 1 is DT_FLOAT"):
        run_op("Add", [X.half(), X])
