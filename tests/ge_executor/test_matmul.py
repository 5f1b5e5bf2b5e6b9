"""EX-11, IMPL-4: the executor's matrix-product kernels (kernels/matmul.py)."""

from __future__ import annotations

import pytest
import torch

from tests.ge_executor.graphs import run_op

torch.manual_seed(0)
A, B, BIAS = torch.randn(3, 4), torch.randn(5, 4), torch.randn(5)


def test_mat_mul_v2_transpose_and_bias():
    (got,) = run_op("MatMulV2", [A, B, BIAS, None], transpose_x2=True)
    torch.testing.assert_close(got, A @ B.T + BIAS)
    (got,) = run_op("MatMul", [A.T, B.T], transpose_x1=True)
    torch.testing.assert_close(got, A @ B.T)

def test_mat_mul_hand_computed():
    (got,) = run_op("MatMulV2", [torch.tensor([[1.0, 2.0]]), torch.tensor([[3.0], [4.0]]), None, None])
    assert got.tolist() == [[11.0]]

@pytest.mark.parametrize("op_type", ["BatchMatMul", "BatchMatMulV2"])
def test_batch_mat_mul_adj_and_broadcast(op_type):
    x1, x2 = torch.randn(2, 3, 4), torch.randn(5, 4)
    (got,) = run_op(op_type, [x1, x2], adj_x2=True)
    torch.testing.assert_close(got, x1 @ x2.T)
