"""EX-11, IMPL-4: the executor's selection kernels (kernels/indexing.py): gathers, strided slices, masked fills."""

from __future__ import annotations

import pytest
import torch

from ge_executor import GraphCheckError
from tests.ge_executor.graphs import run_op

X = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)

def i32(*values):
    return torch.tensor(values, dtype=torch.int32)


def test_gather_and_gather_v2():
    idx = torch.tensor([[1, 0]], dtype=torch.int64)
    assert torch.equal(run_op("Gather", [X, idx])[0], X[idx])
    (got,) = run_op("GatherV2", [X, idx, i32(2)])
    assert torch.equal(got, X[:, :, idx])  # x[:axis] + indices.shape + x[axis+1:]
    with pytest.raises(GraphCheckError, match="out of range"):
        run_op("GatherV2", [X, torch.tensor([3]), i32(1)])

def test_strided_slice_v2_clamps_the_end_like_python():
    begin, end, axes, strides = (torch.tensor(v) for v in (1, 2147483647, 1, 1))
    assert run_op("StridedSliceV2", [X, begin, end, axes, strides])[0].tolist() == X[:, 1:].tolist()

def test_masked_fill_broadcasts_mask_and_value():
    x = torch.zeros(2, 3)
    mask = torch.tensor([True, False, True])
    (got,) = run_op("MaskedFill", [x, mask, torch.tensor(-1.0)])
    assert got.tolist() == [[-1.0, 0.0, -1.0]] * 2


def test_gather_v2_negative_index_support():
    """RAW_OPS:76148 REG_OP(GatherV2), ATTR(negative_index_support, Bool, false): upstream's select converter sets
    it (ge_converter/aten/select.py:20) for x[:, -1], a 0-d index counted from the end; without it a negative index
    is out of range."""
    (last,) = run_op("GatherV2", [X, torch.tensor(-1), torch.tensor([1])], negative_index_support=True)
    assert torch.equal(last, X[:, -1])
    (both,) = run_op("GatherV2", [X, torch.tensor([-3, 2]), i32(-2)], negative_index_support=True)
    assert torch.equal(both, X[:, [0, 2]])
    with pytest.raises(GraphCheckError, match=r"out of range \[0, 3\)"):
        run_op("GatherV2", [X, torch.tensor(-1), torch.tensor([1])])
    with pytest.raises(GraphCheckError, match=r"out of range \[-3, 3\)"):
        run_op("GatherV2", [X, torch.tensor(-4), torch.tensor([1])], negative_index_support=True)


def test_tensor_scatter_update_writes_rows_and_elements():
    """RAW_OPS:39045 REG_OP(TensorScatterUpdate): indices' last axis holds coordinates into x's leading dims."""
    x = torch.zeros(3, 2)
    (got,) = run_op("TensorScatterUpdate", [x, torch.tensor([[2], [0]]), torch.tensor([[1.0, 2.0], [3.0, 4.0]])])
    assert got.tolist() == [[3.0, 4.0], [0.0, 0.0], [1.0, 2.0]] and x.abs().sum() == 0
    (got,) = run_op("TensorScatterUpdate", [x, i32(1, 1, 0, 1).reshape(2, 2), torch.tensor([5.0, 6.0])])
    assert got.tolist() == [[0.0, 6.0], [0.0, 5.0], [0.0, 0.0]]


def test_tensor_scatter_add_adds_equal_coordinates_up():
    """RAW_OPS:39449 REG_OP(TensorScatterAdd)."""
    (got,) = run_op("TensorScatterAdd", [torch.ones(3), torch.tensor([[1], [1], [2]]), torch.tensor([2.0, 3.0, 4.0])])
    assert got.tolist() == [1.0, 6.0, 5.0]


@pytest.mark.parametrize("indices,updates,why", [
    (torch.tensor([[3]]), torch.zeros(1, 2), "out of range"),
    (torch.tensor([[-1]]), torch.zeros(1, 2), "out of range"),
    (torch.tensor([[0]]), torch.zeros(2, 2), "updates must be"),
    (torch.tensor([[0.0]]), torch.zeros(1, 2), "int32 or int64"),
])
def test_tensor_scatter_update_refuses_coordinates_and_shapes_cann_does_not_define(indices, updates, why):
    with pytest.raises(GraphCheckError, match=why):
        run_op("TensorScatterUpdate", [torch.zeros(3, 2), indices, updates])
