"""IMPL-4: the GE executor's matrix and normalisation kernels."""

from __future__ import annotations

import pytest
import torch

from tests.upstream.ge_executor.graphs import run_op

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


def test_layer_norm_v4_three_outputs():
    x, gamma, beta = torch.randn(2, 3, 4), torch.randn(4), torch.randn(4)
    y, mean, rstd = run_op("LayerNormV4", [x, torch.tensor([4], dtype=torch.int32), gamma, beta], outputs=3,
                           epsilon=1e-5)
    torch.testing.assert_close(y, torch.nn.functional.layer_norm(x, [4], gamma, beta, 1e-5))
    torch.testing.assert_close(mean, x.mean(-1, keepdim=True))
    torch.testing.assert_close(rstd, 1 / torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5))


def test_softmax_v2_axes_and_half_to_float():
    x = torch.randn(2, 3)
    torch.testing.assert_close(run_op("SoftmaxV2", [x], axes=[0])[0], x.softmax(0))
    (half,) = run_op("SoftmaxV2", [x.half()], axes=[-1], half_to_float=True)
    assert half.dtype == torch.float32
    torch.testing.assert_close(half, x.half().float().softmax(-1))


def test_masked_fill_broadcasts_mask_and_value():
    x = torch.zeros(2, 3)
    mask = torch.tensor([True, False, True])
    (got,) = run_op("MaskedFill", [x, mask, torch.tensor(-1.0)])
    assert got.tolist() == [[-1.0, 0.0, -1.0]] * 2
