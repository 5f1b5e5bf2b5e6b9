"""IMPL-4: the GE executor's element-wise kernels against torch or hand-computed results."""

from __future__ import annotations

import math

import pytest
import torch

from tests.upstream.ge_executor.graphs import run_op
from torchair_cpu.ge import UnsupportedDtypeError

X = torch.tensor([[-2.0, -0.5, 0.0], [0.5, 1.0, 3.0]])
ROW = torch.tensor([1.0, 2.0, 4.0])


@pytest.mark.parametrize("op_type,want", [
    ("Add", X + ROW), ("Sub", X - ROW), ("Mul", X * ROW), ("Div", X / ROW), ("RealDiv", X / ROW)])
def test_binary_broadcasts(op_type, want):
    (got,) = run_op(op_type, [X, ROW])
    torch.testing.assert_close(got, want)


def test_integer_div_rounds_toward_zero():
    (got,) = run_op("Div", [torch.tensor([7, -7], dtype=torch.int32), torch.tensor([2, 2], dtype=torch.int32)])
    assert got.tolist() == [3, -3] and got.dtype == torch.int32


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


def test_swish_scale():
    (got,) = run_op("Swish", [X], scale=2.0)
    torch.testing.assert_close(got, X * torch.sigmoid(2 * X))


def test_logical_not():
    (got,) = run_op("LogicalNot", [torch.tensor([True, False])])
    assert got.tolist() == [False, True]


def test_dtype_outside_the_registration_is_rejected_naming_op_and_dtype():
    with pytest.raises(UnsupportedDtypeError, match=r"op Gelu .*DT_INT32"):
        run_op("Gelu", [torch.tensor([1, 2], dtype=torch.int32)])
    with pytest.raises(UnsupportedDtypeError, match=r"op LogicalNot .*DT_FLOAT"):
        run_op("LogicalNot", [X])
