"""EX-11, IMPL-4: the kernels that pick, move or accumulate elements the zoo's exports added (kernels/indexing.py,
kernels/shapes.py, kernels/reduce.py): GatherElements, IndexByTensor, SelectV2, Unpack, AsStrided, Tril, Cumsum,
against torch, with their REG_OP's dtypes (RAW_OPS = the wheel's auto_generated_ge_raw_ops.py, line cited)."""

from __future__ import annotations

import pytest
import torch

from ge_executor import GraphCheckError, UnsupportedDtypeError
from tests.ge_executor.graphs import run_op

X = torch.arange(24.0).reshape(2, 3, 4)


def test_gather_elements_along_its_dim_attr():
    """RAW_OPS:76238 REG_OP(GatherElements), attr dim (default 0), index int32/int64; BERT's position ids."""
    index = torch.tensor([[[0, 2, 1, 0]], [[2, 2, 0, 1]]])
    (got,) = run_op("GatherElements", [X, index], dim=1)
    assert got.tolist() == torch.gather(X, 1, index).tolist()
    (negative,) = run_op("GatherElements", [X, torch.tensor([[[-1]], [[-3]]], dtype=torch.int32)], dim=1)
    assert negative.tolist() == [[[8.0]], [[12.0]]]
    with pytest.raises(GraphCheckError, match="out of range"):
        run_op("GatherElements", [X, torch.tensor([[[3]]])], dim=1)


def test_index_by_tensor_indexes_as_aten_index_does():
    """RAW_OPS:17206 REG_OP(IndexByTensor): indices_mask marks the dims the int64 index tensors select on; they
    broadcast together (transformers' padding mask lookup: a (2, 1, 1, 1) and a (1, 1, 1, 16) index)."""
    rows, cols = torch.arange(2).reshape(2, 1, 1, 1), torch.arange(4).reshape(1, 1, 1, 4)
    x = torch.arange(8).reshape(2, 4).to(torch.uint8)
    (got,) = run_op("IndexByTensor", [x, rows, cols], indices_mask=[1, 1])
    assert got.tolist() == x[rows, cols].tolist() and got.shape == (2, 1, 1, 4)
    picks = torch.tensor([2, 0, -1])
    (middle,) = run_op("IndexByTensor", [X, picks], indices_mask=[0, 1])
    assert middle.tolist() == X[:, picks].tolist()
    with pytest.raises(GraphCheckError, match="indices_mask"):
        run_op("IndexByTensor", [X, picks], indices_mask=[1, 1])
    with pytest.raises(GraphCheckError, match="int64"):
        run_op("IndexByTensor", [X, picks.int()], indices_mask=[1])


def test_index_by_tensor_refuses_bool_as_basic_type_does():
    """RAW_OPS:17206: x is BasicType(), which has no bool (the reference's lowering indexes a bool x as uint8)."""
    with pytest.raises(UnsupportedDtypeError, match="IndexByTensor"):
        run_op("IndexByTensor", [torch.tensor([True, False]), torch.tensor([1])], indices_mask=[1])


def test_select_v2_broadcasts_condition_and_branches():
    """RAW_OPS:76895 REG_OP(SelectV2): condition bool; then, else BasicType of one dtype (transformers' 0 / -inf
    mask from two 0-d constants)."""
    condition = torch.tensor([[True, False, True]])
    then, other = torch.tensor(0.0), torch.tensor(float("-inf"))
    (got,) = run_op("SelectV2", [condition.expand(2, 3), then, other])
    assert got.tolist() == torch.where(condition.expand(2, 3), then, other).tolist()
    with pytest.raises(UnsupportedDtypeError, match="SelectV2"):
        run_op("SelectV2", [condition, then, other.double()])
    with pytest.raises(GraphCheckError, match="condition must be bool"):
        run_op("SelectV2", [condition.int(), then, other])


def test_unpack_splits_along_axis_and_checks_num():
    """dynamic_output_ops.py:1134 REG_OP(Unpack): num outputs (REQUIRED_ATTR), axis."""
    pieces = run_op("Unpack", [X], outputs=3, num=3, axis=1)
    assert [p.tolist() for p in pieces] == [p.tolist() for p in X.unbind(1)]
    with pytest.raises(GraphCheckError, match="num=2"):
        run_op("Unpack", [X], outputs=2, num=2, axis=1)


def test_as_strided_reads_the_dense_row_major_elements():
    """RAW_OPS:87194 REG_OP(AsStrided): size, stride, storage_offset inputs over x's elements in row-major order
    (ConvNeXt's (2, 320, 1, 1) view with strides (320, 1, 320, 320), here in small)."""
    x = torch.arange(12.0)
    (got,) = run_op("AsStrided", [x, torch.tensor([2, 3]), torch.tensor([1, 4]), torch.tensor(1)])
    assert got.tolist() == torch.as_strided(x, (2, 3), (1, 4), 1).tolist()
    with pytest.raises(GraphCheckError, match="reach element 13 of 12"):
        run_op("AsStrided", [x, torch.tensor([2, 3]), torch.tensor([1, 4]), torch.tensor(4)])


def test_tril_zeroes_above_the_diagonal_attr():
    """RAW_OPS:40665 REG_OP(Tril): attr diagonal (default 0); BasicType, no bool."""
    x = torch.arange(1.0, 17.0).reshape(4, 4)
    assert run_op("Tril", [x])[0].tolist() == torch.tril(x).tolist()
    assert run_op("Tril", [X], diagonal=-1)[0].tolist() == torch.tril(X, -1).tolist()
    with pytest.raises(UnsupportedDtypeError, match="Tril"):
        run_op("Tril", [torch.ones(2, 2, dtype=torch.bool)])


def test_cumsum_with_exclusive_and_reverse():
    """RAW_OPS:77988 REG_OP(Cumsum): axis input (IndexNumberType), attrs exclusive and reverse (OPT's positions)."""
    x = torch.tensor([[1, 2, 3], [4, 5, 6]])
    axis = torch.tensor(1)
    assert run_op("Cumsum", [x, axis])[0].tolist() == [[1, 3, 6], [4, 9, 15]]
    assert run_op("Cumsum", [x, axis], exclusive=True)[0].tolist() == [[0, 1, 3], [0, 4, 9]]
    assert run_op("Cumsum", [x, axis], reverse=True)[0].tolist() == [[6, 5, 3], [15, 11, 6]]
    assert run_op("Cumsum", [x, torch.tensor(-2)], exclusive=True, reverse=True)[0].tolist() == [[4, 5, 6],
                                                                                              [0, 0, 0]]
    with pytest.raises(GraphCheckError, match="out of range"):
        run_op("Cumsum", [x, torch.tensor(2)])
