"""EX-11, IMPL-4: the element-wise kernels the zoo's exports added (kernels/arith.py, kernels/activation.py): unary
math, minimum/maximum, comparisons and logic, hard activations, each against torch or hand-computed values, and the
dtype signature of its REG_OP (RAW_OPS = the wheel's _ge_concrete_graph/auto_generated_ge_raw_ops.py, line of the
REG_OP cited per test)."""

from __future__ import annotations

import math

import pytest
import torch

from ge_executor import UnsupportedDtypeError
from tests.ge_executor.graphs import run_op

X = torch.tensor([[-2.0, -0.5, 0.0], [0.5, 1.0, 3.0]])
ROW = torch.tensor([1.0, -0.5, 4.0])
POSITIVE = torch.tensor([0.25, 1.0, 2.0, 10.0])


def test_abs_keeps_the_dtype_and_refuses_uint8():
    """RAW_OPS:10341 REG_OP(Abs): FLOAT16, BF16, FLOAT, DOUBLE, INT8..INT64, no UINT8 (the aten converter returns a
    uint8 x itself)."""
    assert run_op("Abs", [X])[0].tolist() == X.abs().tolist()
    (ints,) = run_op("Abs", [torch.tensor([-3, 4], dtype=torch.int8)])
    assert ints.dtype == torch.int8 and ints.tolist() == [3, 4]
    with pytest.raises(UnsupportedDtypeError, match="Abs"):
        run_op("Abs", [torch.tensor([1], dtype=torch.uint8)])


def test_exp_and_log_with_their_base_scale_and_shift_attrs():
    """RAW_OPS:10596 REG_OP(Exp) and 11590 REG_OP(Log): y = base ** (scale * x + shift) and log_base(scale * x +
    shift), base -1 meaning e (the defaults upstream writes: -1, 1, 0)."""
    torch.testing.assert_close(run_op("Exp", [X], base=-1.0, scale=1.0, shift=0.0)[0], X.exp())
    torch.testing.assert_close(run_op("Exp", [X], base=2.0, scale=3.0, shift=1.0)[0], 2.0 ** (3 * X + 1))
    torch.testing.assert_close(run_op("Log", [POSITIVE])[0], POSITIVE.log())
    torch.testing.assert_close(run_op("Log", [POSITIVE], base=10.0, scale=2.0, shift=1.0)[0],
                               torch.log10(2 * POSITIVE + 1))


def test_log_of_an_integer_tensor_is_float32():
    """RAW_OPS:11590 REG_OP(Log): x may be an integer type, y is UnaryDataType (floats): torch.log's float32."""
    (got,) = run_op("Log", [torch.tensor([1, 8], dtype=torch.int64)])
    assert got.dtype == torch.float32
    torch.testing.assert_close(got, torch.tensor([0.0, math.log(8)]))


def test_exp_refuses_an_integer_tensor():
    """RAW_OPS:10596 REG_OP(Exp): UnaryDataType(), no integers (the reference's lowering casts first)."""
    with pytest.raises(UnsupportedDtypeError, match="Exp"):
        run_op("Exp", [torch.tensor([1, 2])])


def test_sqrt_cos_sin():
    """RAW_OPS:10127 REG_OP(Sqrt), 10481 REG_OP(Cos), 13445 REG_OP(Sin)."""
    torch.testing.assert_close(run_op("Sqrt", [POSITIVE])[0], POSITIVE.sqrt())
    torch.testing.assert_close(run_op("Cos", [X])[0], X.cos())
    torch.testing.assert_close(run_op("Sin", [X])[0], X.sin())
    with pytest.raises(UnsupportedDtypeError, match="Sqrt"):
        run_op("Sqrt", [torch.tensor([4])])


@pytest.mark.parametrize("op_type,want", [("Minimum", torch.minimum(X, ROW)), ("Maximum", torch.maximum(X, ROW))])
def test_minimum_and_maximum_broadcast(op_type, want):
    """RAW_OPS:10197 REG_OP(Minimum), 10160 REG_OP(Maximum)."""
    assert run_op(op_type, [X, ROW])[0].tolist() == want.tolist()


@pytest.mark.parametrize("op_type", ["Minimum", "Maximum", "Less", "LessEqual", "GreaterEqual", "NotEqual"])
def test_two_operands_of_two_dtypes_are_refused(op_type):
    """x2 "of the same type as x1" (CANN elewise_calculation_ops.h for each of these REG_OPs)."""
    with pytest.raises(UnsupportedDtypeError, match=op_type):
        run_op(op_type, [X, ROW.double()])


def test_minimum_refuses_int16_as_its_registration_does():
    """RAW_OPS:10197 REG_OP(Minimum): FLOAT, FLOAT16, DOUBLE, INT32, INT64 (the aten converter computes int16 and
    uint8 in int32)."""
    small = torch.tensor([1, 2], dtype=torch.int16)
    with pytest.raises(UnsupportedDtypeError, match="Minimum"):
        run_op("Minimum", [small, small])


@pytest.mark.parametrize("op_type,compare", [("Less", torch.lt), ("LessEqual", torch.le),
                                             ("GreaterEqual", torch.ge), ("NotEqual", torch.ne)])
def test_comparisons_broadcast_to_bool(op_type, compare):
    """RAW_OPS:10053 REG_OP(Less), 10773 REG_OP(LessEqual), 10014 REG_OP(GreaterEqual), 10882 REG_OP(NotEqual):
    RealNumberType in (no bool), bool out."""
    rows, cols = torch.arange(3).reshape(3, 1), torch.arange(4).reshape(1, 4)
    (got,) = run_op(op_type, [cols, rows])
    assert got.dtype == torch.bool and got.tolist() == compare(cols, rows).tolist()
    with pytest.raises(UnsupportedDtypeError, match=op_type):
        run_op(op_type, [torch.tensor([True]), torch.tensor([False])])


def test_logical_and_takes_only_bool():
    """RAW_OPS:11479 REG_OP(LogicalAnd): DT_BOOL only."""
    a, b = torch.tensor([[True, False]]), torch.tensor([[True], [False]])
    assert run_op("LogicalAnd", [a, b])[0].tolist() == (a & b).tolist()
    with pytest.raises(UnsupportedDtypeError, match="LogicalAnd"):
        run_op("LogicalAnd", [torch.tensor([1]), torch.tensor([1])])


def test_bitwise_and_and_invert_take_integers():
    """RAW_OPS:13087 REG_OP(BitwiseAnd) and 12175 REG_OP(Invert): IntegerDataType(), no bool (the aten converters
    write LogicalAnd/LogicalNot for bool)."""
    a, b = torch.tensor([12, -1], dtype=torch.int32), torch.tensor([10, 7], dtype=torch.int32)
    assert run_op("BitwiseAnd", [a, b])[0].tolist() == [8, 7]
    assert run_op("Invert", [a])[0].tolist() == [-13, 0]
    (small,) = run_op("Invert", [torch.tensor([0, 255], dtype=torch.uint8)])
    assert small.tolist() == [255, 0]
    with pytest.raises(UnsupportedDtypeError, match="BitwiseAnd"):
        run_op("BitwiseAnd", [torch.tensor([True]), torch.tensor([True])])


def test_hard_sigmoid_with_its_attrs_and_hard_swish():
    """RAW_OPS:63569 REG_OP(HardSigmoid) (alpha 0.16666666, beta 0.5: torch's hardsigmoid) and 61849
    REG_OP(HardSwish)."""
    x = torch.linspace(-5, 5, 21)
    torch.testing.assert_close(run_op("HardSigmoid", [x], alpha=0.16666666, beta=0.5)[0],
                               torch.nn.functional.hardsigmoid(x))
    torch.testing.assert_close(run_op("HardSigmoid", [x], alpha=0.25, beta=0.0)[0], (x * 0.25).clamp(0, 1))
    torch.testing.assert_close(run_op("HardSwish", [x])[0], torch.nn.functional.hardswish(x))
    with pytest.raises(UnsupportedDtypeError, match="HardSwish"):
        run_op("HardSwish", [x.bfloat16()])


def test_floor_div_rounds_toward_minus_infinity():
    """RAW_OPS:13268 REG_OP(FloorDiv): what operator.floordiv on symbolic sizes writes (funcol's split sizes)."""
    a, b = torch.tensor([7, -7, 6], dtype=torch.int64), torch.tensor([2, 2, -4], dtype=torch.int64)
    assert run_op("FloorDiv", [a, b])[0].tolist() == [3, -4, -2]
    torch.testing.assert_close(run_op("FloorDiv", [X, ROW])[0], torch.floor(X / ROW))
    with pytest.raises(UnsupportedDtypeError, match="FloorDiv"):
        run_op("FloorDiv", [a, b.int()])


def test_not_equal_holds_for_nan():
    """NotEqual is x1 != x2 element-wise: NaN differs from everything, itself included."""
    x = torch.tensor([1.0, float("nan"), 2.0])
    assert run_op("NotEqual", [x, torch.tensor([1.0, float("nan"), 3.0])])[0].tolist() == [False, True, True]
