"""EX-11, IMPL-4: the executor's normalisation kernels (kernels/norm.py)."""

from __future__ import annotations

import pytest
import torch

from ge_executor import GraphCheckError, UnsupportedDtypeError
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


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_bn_infer_normalises_channel_dim_one_with_running_stats(dtype):
    """RAW_OPS:69668 REG_OP(BNInfer): x (float16/float), scale, offset, mean, variance (float), REQUIRED_ATTR
    epsilon; as upstream's _native_batch_norm_legit_no_training converter emits it (x laid out NCHW)."""
    x = torch.randn(2, 3, 4, 5).to(dtype)
    scale, offset, mean, var = torch.rand(3) + 0.5, torch.randn(3), torch.randn(3), torch.rand(3) + 0.1
    (got,) = run_op("BNInfer", [x, scale, offset, mean, var], epsilon=1e-3)
    want = torch.nn.functional.batch_norm(x.float(), mean, var, scale, offset, training=False, eps=1e-3)
    assert got.dtype == dtype
    torch.testing.assert_close(got, want.to(dtype))


def test_bn_infer_refuses_what_its_registration_does():
    x, c = torch.randn(2, 3, 4, 4), torch.ones(3)
    with pytest.raises(GraphCheckError, match="epsilon"):
        run_op("BNInfer", [x, c, c, c, c])
    with pytest.raises(GraphCheckError, match="scale must be DT_FLOAT"):
        run_op("BNInfer", [x, c.half(), c, c, c], epsilon=1e-5)
    with pytest.raises(GraphCheckError, match="2 values for 3 channels"):
        run_op("BNInfer", [x, c[:2], c, c, c], epsilon=1e-5)
    with pytest.raises(UnsupportedDtypeError, match="BNInfer"):
        run_op("BNInfer", [x.bfloat16(), c, c, c, c], epsilon=1e-5)
