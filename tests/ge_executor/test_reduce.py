"""EX-11, IMPL-4: the executor's reduction kernels (kernels/reduce.py) against torch."""

from __future__ import annotations

import pytest
import torch

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
