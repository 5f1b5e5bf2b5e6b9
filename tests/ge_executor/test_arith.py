"""EX-11, IMPL-4: the executor's element-wise arithmetic, comparison, logic and cast kernels (kernels/arith.py)
against torch or hand-computed results."""

from __future__ import annotations

import pytest
import torch

from ge_executor import UnsupportedDtypeError
from tests.ge_executor.graphs import run_op

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

def test_unary_kernels():
    assert run_op("Neg", [X])[0].tolist() == (-X).tolist()
    torch.testing.assert_close(run_op("Rsqrt", [X.abs() + 1])[0], torch.rsqrt(X.abs() + 1))
    torch.testing.assert_close(run_op("Muls", [X], value=2.5)[0], X * 2.5)
    torch.testing.assert_close(run_op("Pow", [X, torch.tensor(2.0)])[0], X ** 2)
    assert run_op("TensorMove", [X])[0].tolist() == X.tolist()

def test_muls_rejects_bfloat16_as_its_registration_does():
    with pytest.raises(UnsupportedDtypeError, match="Muls"):
        run_op("Muls", [X.bfloat16()], value=2.0)

def test_greater_broadcasts_to_a_bool_mask():
    rows, cols = torch.arange(3).reshape(3, 1), torch.arange(4).reshape(1, 4)
    (got,) = run_op("Greater", [cols, rows])
    assert got.dtype == torch.bool and got.tolist() == (cols > rows).tolist()

def test_logical_not():
    (got,) = run_op("LogicalNot", [torch.tensor([True, False])])
    assert got.tolist() == [False, True]

def test_cast_reads_dst_type_in_cpp_numbering():
    (got,) = run_op("Cast", [torch.tensor([1.7, -1.7])], dst_type=torch.int32)
    assert got.tolist() == [1, -1] and got.dtype == torch.int32
    (got,) = run_op("Cast", [torch.tensor([1.5])], dst_type=27)  # as upstream writes it: Int attr, 27 = DT_BF16
    assert got.dtype == torch.bfloat16

def test_real_and_imag_take_the_parts_of_a_complex_tensor():
    z = torch.complex(X, X * 2)
    (re,) = run_op("Real", [z])
    (im,) = run_op("Imag", [z])
    assert re.dtype == torch.float32 and re.tolist() == X.tolist()
    assert im.dtype == torch.float32 and im.tolist() == (X * 2).tolist()
    (wide,) = run_op("Real", [z.to(torch.complex128)], Tout=11)  # DT_DOUBLE in GE's C++ numbering
    assert wide.dtype == torch.float64 and wide.tolist() == X.tolist()
    with pytest.raises(UnsupportedDtypeError):
        run_op("Real", [X])
