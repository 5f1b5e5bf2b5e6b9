"""EX-11, IMPL-4: the executor's reduction kernels (kernels/reduce.py) against torch."""

from __future__ import annotations

import pytest
import torch

from ge_executor import GraphCheckError, UnsupportedDtypeError
from tests.ge_executor.graphs import run_op

X = torch.tensor([[-2.0, -0.5, 0.0], [0.5, 1.0, 3.0]])


@pytest.mark.parametrize("keep", [False, True])
def test_reduce_mean(keep):
    (got,) = run_op("ReduceMean", [X, torch.tensor([-1])], keep_dims=keep)
    torch.testing.assert_close(got, X.mean(-1, keepdim=keep))

@pytest.mark.parametrize("keep", [False, True])
def test_reduce_sum(keep):
    (got,) = run_op("ReduceSum", [X, torch.tensor([-1])], keep_dims=keep)
    assert got.tolist() == X.sum(-1, keepdim=keep).tolist()
    (same,) = run_op("ReduceSum", [X, torch.tensor([], dtype=torch.int64)])
    assert same.tolist() == X.tolist()


@pytest.mark.parametrize("keep", [False, True])
def test_reduce_max(keep):
    """RAW_OPS:70423 REG_OP(ReduceMax): axes input, keep_dims attr; in the input's dtype."""
    (got,) = run_op("ReduceMax", [X, torch.tensor([0])], keep_dims=keep)
    assert got.tolist() == X.amax(0, keepdim=keep).tolist()
    (ints,) = run_op("ReduceMax", [X.int(), torch.tensor([0, 1])])
    assert ints.dtype == torch.int32 and ints.item() == 3


def test_reduce_max_of_no_element_is_refused_not_invented():
    with pytest.raises(GraphCheckError, match="size 0"):
        run_op("ReduceMax", [torch.empty(0, 3), torch.tensor([0])])
    with pytest.raises(UnsupportedDtypeError, match="ReduceMax"):
        run_op("ReduceMax", [X.to(torch.complex64), torch.tensor([0])])


def test_top_k_v2_largest_and_smallest_with_int32_indices():
    """RAW_OPS:77413 REG_OP(TopKV2): k a 0-d int32 tensor, values in x's dtype, int32 indices; the k largest in
    descending order (``largest``), else the k smallest ascending, along the last dimension."""
    x = torch.tensor([[3.0, -1.0, 7.0, 0.5], [2.0, 9.0, -4.0, 1.0]])
    values, indices = run_op("TopKV2", [x, torch.tensor(2, dtype=torch.int32)], 2, sorted=True, dim=-1, largest=True)
    assert values.tolist() == [[7.0, 3.0], [9.0, 2.0]] and indices.tolist() == [[2, 0], [1, 0]]
    assert indices.dtype == torch.int32
    values, indices = run_op("TopKV2", [x.int(), torch.tensor(3, dtype=torch.int32)], 2, dim=1, largest=False)
    assert values.tolist() == [[-1, 0, 3], [-4, 1, 2]] and indices.tolist() == [[1, 3, 0], [2, 3, 0]]


def test_top_k_v2_of_unsigned_types_keeps_their_order():
    """RealNumberType holds uint16, uint32 and uint64, which torch's topk does not take: they are ordered through
    signed keys (uint64 values past int64's range included)."""
    big = torch.tensor([[2**63 + 5, 3, 2**64 - 1, 2**63 - 1]], dtype=torch.uint64)
    values, indices = run_op("TopKV2", [big, torch.tensor(3, dtype=torch.int32)], 2)
    assert indices.tolist() == [[2, 0, 3]] and values.dtype == torch.uint64
    assert values.view(torch.int64).tolist() == big.view(torch.int64)[:, [2, 0, 3]].tolist()
    small = torch.tensor([[7, 65535, 0]], dtype=torch.int64).to(torch.uint16)
    values, indices = run_op("TopKV2", [small, torch.tensor(2, dtype=torch.int32)], 2, largest=False)
    assert values.dtype == torch.uint16 and values.to(torch.int64).tolist() == [[0, 7]] and indices.tolist() == [[2, 0]]


@pytest.mark.parametrize("k,dim,why", [(5, -1, "k=5"), (-1, -1, "k=-1"), (1, 0, "last dimension")])
def test_top_k_v2_refuses_what_cann_does_not_define(k, dim, why):
    """The last dimension has at least k elements, and the op works along the last dimension (CANN's TopKV2 docs;
    ``dim`` is reserved there)."""
    with pytest.raises(GraphCheckError, match=why):
        run_op("TopKV2", [X, torch.tensor(k, dtype=torch.int32)], dim=dim)
    with pytest.raises(GraphCheckError, match="int32"):
        run_op("TopKV2", [X, torch.tensor(1)])
    with pytest.raises(GraphCheckError, match="0-d"):
        run_op("TopKV2", [X, torch.tensor([1], dtype=torch.int32)])
    with pytest.raises(UnsupportedDtypeError, match="TopKV2"):
        run_op("TopKV2", [X.bool(), torch.tensor(1, dtype=torch.int32)])


def test_sort_along_the_last_dimension_with_int32_positions():
    """RAW_OPS:47570 REG_OP(Sort): values and int32 y2; ``descending``; ``stable`` keeps equal elements in order."""
    values, indices = run_op("Sort", [X], 2, descending=True)
    assert values.tolist() == [[0.0, -0.5, -2.0], [3.0, 1.0, 0.5]] and indices.dtype == torch.int32
    assert indices.tolist() == [[2, 1, 0], [2, 1, 0]]
    ties = torch.tensor([3, 1, 3, 1, 2], dtype=torch.int64)
    values, indices = run_op("Sort", [ties], 2, stable=True)
    assert values.tolist() == [1, 1, 2, 3, 3] and indices.tolist() == [1, 3, 4, 0, 2]


def test_sort_refuses_another_axis_and_types_its_registration_lacks():
    """CANN's Sort works along the last dimension; float64 and bool are not in its registration."""
    with pytest.raises(GraphCheckError, match="last dimension"):
        run_op("Sort", [X], 2, axis=0)
    with pytest.raises(UnsupportedDtypeError, match="Sort"):
        run_op("Sort", [X.double()], 2)


def test_histogram_counts_like_histc():
    """RAW_OPS:34897 REG_OP(Histogram): equal-width bins over [min, max], the max in the last bin, values outside
    left out; float32 counts (int32 for an int32 x); min and max both 0: the data's own range."""
    x = torch.tensor([0.0, 1.0, 1.0, 2.0, 3.0, 3.0, -1.0, 4.0])
    (got,) = run_op("Histogram", [x], bins=4, min=0.0, max=3.0)
    assert got.dtype == torch.float32 and got.tolist() == [1.0, 2.0, 1.0, 2.0]
    (got,) = run_op("Histogram", [x], bins=5)
    assert got.tolist() == torch.histc(x, bins=5).tolist() == [1.0, 1.0, 2.0, 1.0, 3.0]
    (got,) = run_op("Histogram", [torch.tensor([0, 2, 2, 7], dtype=torch.int32)], bins=2, min=0.0, max=4.0)
    assert got.dtype == torch.int32 and got.tolist() == [1, 2]


@pytest.mark.parametrize("attrs,x,why", [
    ({"bins": 0, "min": 0.0, "max": 1.0}, [0.5], "bins=0"),
    ({"bins": 2, "min": 2.0, "max": 1.0}, [0.5], "min=2.0"),
    ({"bins": 2, "min": 1.0, "max": 1.0}, [0.5], "min=1.0"),
    ({"bins": 2}, [0.5, 0.5], "one value"),
])
def test_histogram_refuses_what_cann_documents_no_count_for(attrs, x, why):
    with pytest.raises(GraphCheckError, match=why):
        run_op("Histogram", [torch.tensor(x)], **attrs)
