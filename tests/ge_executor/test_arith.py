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


@pytest.mark.parametrize("op_type,line", [("Add", 11703), ("Sub", 10267), ("Div", 10514), ("RealDiv", 10090),
                                          ("Greater", 12280)])
def test_x1_and_x2_must_share_one_dtype(op_type, line):
    """RAW_OPS:<line> REG_OP(<op_type>) lists one type set for x1 and x2, and CANN ties them (its op_proto
    verifiers' CheckTwoInputDtypeSame; Sub's header: "x2 ... of the same dtype as x1"): mixed dtypes are an error
    naming the op and both dtypes, never a silent promotion."""
    (same,) = run_op(op_type, [X.half(), ROW.half()], in_names=["x1", "x2"])
    assert same.dtype == (torch.bool if op_type == "Greater" else torch.float16)
    with pytest.raises(UnsupportedDtypeError, match=rf"op {op_type} .*x1 is DT_FLOAT16, x2 is DT_FLOAT\b"):
        run_op(op_type, [X.half(), ROW], in_names=["x1", "x2"])
    with pytest.raises(UnsupportedDtypeError, match=rf"op {op_type} .*x1 is DT_INT32, x2 is DT_INT64"):
        run_op(op_type, [X.int(), ROW.long()], in_names=["x1", "x2"])


def test_mul_takes_mixed_dtypes_into_the_promoted_type():
    """RAW_OPS:11629 REG_OP(Mul): x1 "T1", x2 "T2", y "T3", and CANN's elewise_calculation_ops.h declares
    T3 = Promote({"T1", "T2"}): mixed dtypes are CANN's own, computed in the promoted type."""
    (got,) = run_op("Mul", [X.half(), ROW], in_names=["x1", "x2"])
    assert got.dtype == torch.float32
    torch.testing.assert_close(got, X.half().float() * ROW)
    (ints,) = run_op("Mul", [torch.tensor([3], dtype=torch.int32), torch.tensor([0.5], dtype=torch.float16)])
    assert ints.dtype == torch.float16 and ints.tolist() == [1.5]
