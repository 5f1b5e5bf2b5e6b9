"""IMPL-4: the GE executor's data-movement kernels (shape inputs as tensors, multi-output SplitV, Cast's dt attr)."""

from __future__ import annotations

import pytest
import torch

from tests.upstream.ge_executor.graphs import Builder, run_op
from torchair_cpu.ge import GraphCheckError

X = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)


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


def test_gather_and_gather_v2():
    idx = torch.tensor([[1, 0]], dtype=torch.int64)
    assert torch.equal(run_op("Gather", [X, idx])[0], X[idx])
    (got,) = run_op("GatherV2", [X, idx, i32(2)])
    assert torch.equal(got, X[:, :, idx])  # x[:axis] + indices.shape + x[axis+1:]
    with pytest.raises(GraphCheckError, match="out of range"):
        run_op("GatherV2", [X, torch.tensor([3]), i32(1)])


def test_pack_stacks_dynamic_inputs():
    a, b = torch.tensor([1, 2]), torch.tensor([3, 4])
    (got,) = run_op("Pack", [a, b], N=2, axis=1)
    assert got.tolist() == [[1, 3], [2, 4]]


def test_range_in_start_dtype():
    (got,) = run_op("Range", [torch.tensor(1), torch.tensor(7), torch.tensor(2)])
    assert got.tolist() == [1, 3, 5] and got.dtype == torch.int64


def test_cast_reads_dst_type_in_cpp_numbering():
    (got,) = run_op("Cast", [torch.tensor([1.7, -1.7])], dst_type=torch.int32)
    assert got.tolist() == [1, -1] and got.dtype == torch.int32
    (got,) = run_op("Cast", [torch.tensor([1.5])], dst_type=27)  # as upstream writes it: Int attr, 27 = DT_BF16
    assert got.dtype == torch.bfloat16


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
