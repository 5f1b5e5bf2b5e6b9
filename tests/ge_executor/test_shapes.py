"""EX-11, IMPL-4: the executor's data-movement kernels (kernels/shapes.py): shape inputs as tensors, multi-output
SplitV, symbolic dims computed in the graph."""

from __future__ import annotations

import pytest
import torch

from ge_executor import GraphCheckError
from tests.ge_executor.graphs import Builder, run_op

X = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
M = torch.tensor([[-2.0, -0.5, 0.0], [0.5, 1.0, 3.0]])

def i32(*values):
    return torch.tensor(values, dtype=torch.int32)


def test_transpose_takes_perm_as_input():
    (got,) = run_op("Transpose", [X, i32(2, 0, 1)])
    assert torch.equal(got, X.permute(2, 0, 1))

def test_reshape_takes_shape_as_input_and_infers_minus_one():
    (got,) = run_op("Reshape", [X, i32(-1, 4)])
    assert torch.equal(got, X.reshape(6, 4))
    with pytest.raises(GraphCheckError, match="cannot reshape"):
        run_op("Reshape", [X, i32(5, 5)])

def test_shape_defaults_to_int32_and_honours_dtype():
    assert run_op("Shape", [X])[0].tolist() == [2, 3, 4]
    assert run_op("Shape", [X])[0].dtype == torch.int32
    assert run_op("Shape", [X], dtype=torch.int64)[0].dtype == torch.int64
    # upstream writes it as an Int attr (REG_OP ATTR(dtype, Int, DT_INT32)), C++ numbering: 9 = DT_INT64
    assert run_op("Shape", [X], dtype=9)[0].dtype == torch.int64

def test_shape_ops():
    assert run_op("BroadcastTo", [M[:1], torch.tensor([3, 3])])[0].tolist() == M[:1].expand(3, 3).tolist()
    (joined,) = run_op("ConcatV2", [M, M, torch.tensor(-1)], N=2)
    assert joined.tolist() == torch.cat([M, M], -1).tolist()
    assert list(run_op("Unsqueeze", [M], axes=[0, -1])[0].shape) == [1, 2, 3, 1]

def test_pack_stacks_dynamic_inputs():
    a, b = torch.tensor([1, 2]), torch.tensor([3, 4])
    (got,) = run_op("Pack", [a, b], N=2, axis=1)
    assert got.tolist() == [[1, 3], [2, 4]]

def test_range_in_start_dtype():
    (got,) = run_op("Range", [torch.tensor(1), torch.tensor(7), torch.tensor(2)])
    assert got.tolist() == [1, 3, 5] and got.dtype == torch.int64

def test_identity_copies():
    x = torch.tensor([1.0])
    (got,) = run_op("Identity", [x])
    assert torch.equal(got, x) and got.data_ptr() != x.data_ptr()

def test_split_v_has_one_output_per_piece():
    got = run_op("SplitV", [X, i32(1, -1), i32(2)], outputs=2, num_split=2)
    assert torch.equal(got[0], X[..., :1]) and torch.equal(got[1], X[..., 1:])

def test_symbolic_dims_flow_through_shape_gather_pack_reshape():
    """A -1 Data dim: the graph computes [batch, 12] at run time, as upstream's converters emit it."""
    b = Builder()
    x = b.data(X, dims=[-1, 3, 4])
    shape = b.op("Shape", [x])
    batch = b.op("GatherV2", [f"{shape}:0", b.const(torch.tensor([0], dtype=torch.int32)),
                              b.const(torch.tensor(0, dtype=torch.int32))])
    size = b.op("Pack", [f"{batch}:0", b.const(torch.tensor([12], dtype=torch.int32))], N=2, axis=0)
    flat = b.op("Reshape", [x, f"{b.op('Reshape', [f'{size}:0', b.const(i32(-1))])}:0"])
    graph = b.output(f"{flat}:0")
    for n in (1, 5):
        assert graph.run([torch.ones(n, 3, 4)])[0].shape == (n, 12)


def test_squeeze_removes_listed_size_one_dims_or_all_of_them():
    """RAW_OPS:1611 REG_OP(Squeeze), attr axis ListInt {}: empty removes every size-1 dim; listed (negative from
    the end) removes those; a listed dim that is not 1 is an error (CANN: "an error to squeeze a dimension that is
    not 1"), not torch's silent no-op."""
    x = torch.arange(6.0).reshape(1, 3, 1, 2)
    assert list(run_op("Squeeze", [x])[0].shape) == [3, 2]
    assert list(run_op("Squeeze", [x], axis=[0])[0].shape) == [3, 1, 2]
    assert list(run_op("Squeeze", [x], axis=[-2, 0])[0].shape) == [3, 2]
    assert run_op("Squeeze", [x], axis=[2])[0].tolist() == x.squeeze(2).tolist()
    with pytest.raises(GraphCheckError, match=r"cannot squeeze dims \[1\] of shape \[1, 3, 1, 2\]"):
        run_op("Squeeze", [x], axis=[1])
    with pytest.raises(GraphCheckError, match="out of range"):
        run_op("Squeeze", [x], axis=[4])


def test_fill_broadcasts_a_scalar_value_to_dims_in_its_dtype():
    """RAW_OPS:64837 REG_OP(Fill): dims (IndexNumberType), value (the output's type)."""
    (got,) = run_op("Fill", [torch.tensor([2, 3]), torch.tensor(1.5, dtype=torch.float16)])
    assert got.dtype == torch.float16 and got.tolist() == [[1.5] * 3] * 2
    (empty,) = run_op("Fill", [torch.tensor([0]), torch.tensor(0.0)])
    assert empty.shape == (0,)
    with pytest.raises(GraphCheckError, match="one element"):
        run_op("Fill", [torch.tensor([2]), torch.tensor([1.0, 2.0])])
