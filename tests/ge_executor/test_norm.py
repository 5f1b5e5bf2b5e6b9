"""EX-11, IMPL-4: the executor's normalisation kernels (kernels/norm.py)."""

from __future__ import annotations

import torch

from tests.ge_executor.graphs import run_op


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
