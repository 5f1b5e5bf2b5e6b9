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
