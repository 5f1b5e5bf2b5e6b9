"""EX-11, IMPL-4: the executor's activation kernels (kernels/activation.py) against torch or hand-computed results."""

from __future__ import annotations

import math

import pytest
import torch

from ge_executor import UnsupportedDtypeError
from tests.ge_executor.graphs import run_op

X = torch.tensor([[-2.0, -0.5, 0.0], [0.5, 1.0, 3.0]])


@pytest.mark.parametrize("op_type,fn", [
    ("Relu", torch.relu), ("Tanh", torch.tanh), ("Sigmoid", torch.sigmoid),
    ("Swish", lambda x: x * torch.sigmoid(x))])
def test_activations(op_type, fn):
    (got,) = run_op(op_type, [X])
    torch.testing.assert_close(got, fn(X))

def test_gelu_is_the_tanh_approximation():
    (got,) = run_op("Gelu", [torch.tensor([1.0])])
    hand = 0.5 * (1 + math.tanh(math.sqrt(2 / math.pi) * (1 + 0.044715)))
    assert got.item() == pytest.approx(hand, rel=1e-6)
    torch.testing.assert_close(run_op("Gelu", [X])[0], torch.nn.functional.gelu(X, approximate="tanh"))

@pytest.mark.parametrize("approximate", [b"none", b"tanh"])
def test_gelu_v2_follows_its_approximate_attr(approximate):
    (got,) = run_op("GeluV2", [X], approximate=approximate)
    torch.testing.assert_close(got, torch.nn.functional.gelu(X, approximate=approximate.decode()))

def test_gelu_v2_without_the_attr_is_erf_gelu():
    (got,) = run_op("GeluV2", [X])
    torch.testing.assert_close(got, torch.nn.functional.gelu(X))

def test_swish_scale():
    (got,) = run_op("Swish", [X], scale=2.0)
    torch.testing.assert_close(got, X * torch.sigmoid(2 * X))

def test_dtype_outside_the_registration_is_rejected_naming_op_and_dtype():
    with pytest.raises(UnsupportedDtypeError, match=r"op Gelu .*DT_INT32"):
        run_op("Gelu", [torch.tensor([1, 2], dtype=torch.int32)])
    with pytest.raises(UnsupportedDtypeError, match=r"op LogicalNot .*DT_FLOAT"):
        run_op("LogicalNot", [X])
