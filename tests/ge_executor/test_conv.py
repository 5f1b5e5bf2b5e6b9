"""EX-11, IMPL-4: the vision kernels (kernels/conv.py, kernels/pooling.py): Conv2D and MaxPoolWithArgmaxV1 in the
NCHW layout upstream's converters write, against torch (RAW_OPS = the wheel's auto_generated_ge_raw_ops.py)."""

from __future__ import annotations

import pytest
import torch

from ge_executor import GraphCheckError, UnsupportedDtypeError
from tests.ge_executor.graphs import run_op

torch.manual_seed(0)
X = torch.randn(2, 4, 7, 6)


@pytest.mark.parametrize("stride,padding,dilation,groups", [(1, 0, 1, 1), (2, 1, 1, 1), (1, 2, 2, 2), (2, 1, 1, 4)])
def test_conv2d_nchw_with_bias(stride, padding, dilation, groups):
    """RAW_OPS:43236 REG_OP(Conv2D): strides/dilations [1, 1, h, w], pads [top, bottom, left, right], groups,
    data_format NCHW (what convolution.py:20-31 writes), bias optional."""
    weight, bias = torch.randn(8, 4 // groups, 3, 3), torch.randn(8)
    (got,) = run_op("Conv2D", [X, weight, bias, None], strides=[1, 1, stride, stride],
                    pads=[padding] * 4, dilations=[1, 1, dilation, dilation], groups=groups, data_format=b"NCHW",
                    offset_x=0)
    want = torch.nn.functional.conv2d(X, weight, bias, stride, padding, dilation, groups)
    torch.testing.assert_close(got, want)


def test_conv2d_asymmetric_pads_and_no_bias():
    weight = torch.randn(3, 4, 2, 3)
    (got,) = run_op("Conv2D", [X, weight, None, None], strides=[1, 1, 1, 1], pads=[1, 0, 0, 2],
                    data_format=b"NCHW")
    torch.testing.assert_close(got, torch.nn.functional.conv2d(torch.nn.functional.pad(X, (0, 2, 1, 0)), weight))


def test_conv2d_refuses_nhwc_int8_and_mixed_dtypes():
    """Only NCHW (the REG_OP's default NHWC lays the filter out differently); int8 is quantised (offset_w);
    x and filter of one dtype."""
    weight = torch.randn(3, 4, 3, 3)
    with pytest.raises(GraphCheckError, match="NCHW"):
        run_op("Conv2D", [X, weight, None, None], strides=[1, 1, 1, 1], pads=[0] * 4)
    with pytest.raises(UnsupportedDtypeError, match="Conv2D"):
        run_op("Conv2D", [X, weight.half(), None, None], strides=[1, 1, 1, 1], pads=[0] * 4, data_format=b"NCHW")
    with pytest.raises(UnsupportedDtypeError, match="Conv2D"):
        run_op("Conv2D", [X.double(), weight.double(), None, None], strides=[1, 1, 1, 1], pads=[0] * 4,
               data_format=b"NCHW")


@pytest.mark.parametrize("kernel,stride,padding,ceil_mode", [(3, 2, 1, False), (2, 2, 0, False), (3, 2, 0, True)])
def test_max_pool_with_argmax_v1_values_and_int32_indices(kernel, stride, padding, ceil_mode):
    """RAW_OPS:56106 REG_OP(MaxPoolWithArgmaxV1), attrs [1, h, w, 1] as max_pool2d_with_indices.py:47-50 writes
    them; argmax with dtype 3 on NCHW is the int32 index into the (H, W) plane (CANN's operator specification:
    "when the dtype of argmax is int32, argmax must be index")."""
    y, argmax = run_op("MaxPoolWithArgmaxV1", [X], outputs=2, ksize=[1, kernel, kernel, 1],
                       strides=[1, stride, stride, 1], pads=[1, padding, padding, 1], dilation=[1, 1, 1, 1],
                       ceil_mode=ceil_mode)
    want, index = torch.nn.functional.max_pool2d(X, kernel, stride, padding, ceil_mode=ceil_mode,
                                                 return_indices=True)
    assert argmax.dtype == torch.int32 and argmax.tolist() == index.tolist()
    assert y.tolist() == want.tolist()


def test_max_pool_with_argmax_v1_checks_its_attrs():
    with pytest.raises(GraphCheckError, match="exceed half the window"):
        run_op("MaxPoolWithArgmaxV1", [X], outputs=2, ksize=[1, 2, 2, 1], strides=[1, 1, 1, 1], pads=[1, 2, 2, 1])
    with pytest.raises(GraphCheckError, match="only 3"):
        run_op("MaxPoolWithArgmaxV1", [X], outputs=2, ksize=[1, 2, 2, 1], strides=[1, 1, 1, 1], pads=[1, 0, 0, 1],
               dtype=4)
    with pytest.raises(UnsupportedDtypeError, match="MaxPoolWithArgmaxV1"):
        run_op("MaxPoolWithArgmaxV1", [X.bfloat16()], outputs=2, ksize=[1, 2, 2, 1], strides=[1, 1, 1, 1],
               pads=[1, 0, 0, 1])
