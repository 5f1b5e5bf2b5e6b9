"""EX-11, IMPL-4: GE element-wise arithmetic, comparison, logic and type kernels (CANN semantics): broadcasting binary
ops, ``Muls``, ``Neg``, ``Rsqrt``, ``Pow``, ``Minimum``, ``Maximum``, unary math (``Abs``, ``Exp``, ``Log``,
``Sqrt``, ``Cos``, ``Sin``), comparisons (``Greater``, ``GreaterEqual``, ``Less``, ``LessEqual``, ``NotEqual``), logic
(``LogicalNot``, ``LogicalAnd``, ``BitwiseAnd``, ``Invert``), ``Cast``, and the parts of a complex tensor.

Dtype sets come from each op's ``REG_OP`` in the wheel's generated raw ops (``RAW_OPS:<line>``; ``TensorType::X()``
sets as ``METADEF`` spells them out). Two inputs must share one dtype where CANN requires it (``same_dtype``): the
wheel's REG_OPs of ``Add``, ``Sub``, ``Div``, ``RealDiv`` and ``Greater`` list one type set for ``x1`` and ``x2``, and
CANN ties them: its op_proto verifiers (``AddVerify``, ``DivVerify``, ``RealDivVerify``, ``GreaterVerify`` in
``elewise_calculation_ops.cc``: ``CheckTwoInputDtypeSame(op, "x1", "x2")``) and, for ``Sub``, its
``elewise_calculation_ops.h`` ("x2: A ND Tensor of the same dtype as x1"); so does that header for ``Minimum``,
``Maximum``, ``Less``, ``LessEqual``, ``GreaterEqual``, ``FloorDiv`` and ``BitwiseAnd`` ("x2: A Tensor of the same
type as x1").
``Mul`` is the exception: its REG_OP gives ``x1`` and ``x2`` their own type variables (``T1``, ``T2``) and CANN's
header makes the output ``Promote({"T1", "T2"})``, so mixed dtypes are CANN's own and compute in the promoted type.
"""

from __future__ import annotations

import torch

from ge_executor.registry import ALL, METADEF, RAW_OPS, REAL, UNARY, OpView, kernel, required

_GE_GRAPH = "torch_npu-2.14.0 torchair/ge/_ge_graph.py"
_ADD = {"DT_FLOAT", "DT_INT32", "DT_INT64", "DT_FLOAT16", "DT_BF16", "DT_INT16", "DT_INT8", "DT_UINT8",
        "DT_DOUBLE", "DT_COMPLEX128", "DT_COMPLEX64"}  # fmt: skip
_SUB = _ADD | {"DT_UINT16"}
# Mul's REG_OP in the wheel names only type variables ("T1", line 11630); CANN's elewise_calculation_ops.h lists the
# number types and bool for them, the set taken here.
_MUL = _SUB | {"DT_BOOL"}
_COMPLEX = frozenset({"DT_COMPLEX64", "DT_COMPLEX128"})
_VERIFY = "CANN op_proto elewise_calculation_ops.cc"
_HEADER = "x1, x2 one dtype: CANN elewise_calculation_ops.h"
_MIN_MAX = {"DT_FLOAT", "DT_FLOAT16", "DT_DOUBLE", "DT_INT32", "DT_INT64"}
# TensorType::IntegerDataType() (METADEF): the signed and unsigned integer types
_INTEGER = {"DT_INT8", "DT_INT16", "DT_INT32", "DT_INT64", "DT_UINT8", "DT_UINT16", "DT_UINT32", "DT_UINT64"}
_LOG_X = {"DT_UINT8", "DT_INT8", "DT_INT16", "DT_INT32", "DT_INT64", "DT_FLOAT", "DT_DOUBLE", "DT_FLOAT16", "DT_BF16",
          "DT_BOOL", "DT_COMPLEX64", "DT_COMPLEX128"}
X1_X2 = ((0, 1),)  # x1 and x2 share one dtype


@kernel("Add", dtypes=_ADD, same_dtype=X1_X2,
        source=f"{RAW_OPS}:11703 REG_OP(Add); x1, x2 one dtype: {_VERIFY} AddVerify")
def add(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x1 + x2 with broadcasting."""
    x1, x2 = required(op, inputs, 0), required(op, inputs, 1)
    return torch.add(x1, x2)


@kernel("Sub", dtypes=_SUB, same_dtype=X1_X2,
        source=f"{RAW_OPS}:10267 REG_OP(Sub); x1, x2 one dtype: CANN elewise_calculation_ops.h REG_OP(Sub) docs")
def sub(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x1 - x2 with broadcasting."""
    x1, x2 = required(op, inputs, 0), required(op, inputs, 1)
    return torch.sub(x1, x2)


@kernel("Mul", dtypes=_MUL, source=f"{RAW_OPS}:11629 REG_OP(Mul) (T1, T2, T3 = Promote(T1, T2) per CANN "
                                    "elewise_calculation_ops.h)")
def mul(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x1 * x2 with broadcasting, in the promoted dtype of the two (``T3 = Promote(T1, T2)``; bool: logical and)."""
    x1, x2 = required(op, inputs, 0), required(op, inputs, 1)
    return torch.mul(x1, x2)


def _divide(x1: torch.Tensor, x2: torch.Tensor) -> torch.Tensor:
    """True division for floating inputs; for integer inputs CANN's Div/RealDiv keep the integer type and round
    toward zero."""
    if x1.is_floating_point() or x2.is_floating_point() or x1.is_complex() or x2.is_complex():
        return torch.div(x1, x2)
    return torch.div(x1, x2, rounding_mode="trunc")


@kernel("Div", dtypes=_SUB, same_dtype=X1_X2,
        source=f"{RAW_OPS}:10514 REG_OP(Div); x1, x2 one dtype: {_VERIFY} DivVerify")
def div(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x1 / x2 with broadcasting."""
    return _divide(required(op, inputs, 0), required(op, inputs, 1))


@kernel("RealDiv", dtypes=_SUB, same_dtype=X1_X2,
        source=f"{RAW_OPS}:10090 REG_OP(RealDiv); x1, x2 one dtype: {_VERIFY} RealDivVerify")
def real_div(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x1 / x2 with broadcasting."""
    return _divide(required(op, inputs, 0), required(op, inputs, 1))


@kernel("FloorDiv", dtypes=_SUB, same_dtype=X1_X2,
        source=f"{RAW_OPS}:13268 REG_OP(FloorDiv); {_HEADER}")
def floor_div(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """floor(x1 / x2) with broadcasting, in x1's dtype (integers rounded toward minus infinity, as Python's //)."""
    return torch.div(required(op, inputs, 0), required(op, inputs, 1), rounding_mode="floor")


@kernel("Muls", dtypes={"DT_FLOAT", "DT_INT16", "DT_INT32", "DT_FLOAT16"}, source=f"{RAW_OPS}:15375 REG_OP(Muls)")
def muls(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x times the float attr ``value``, in x's dtype."""
    x = required(op, inputs, 0)
    return (x * op.f("value")).to(x.dtype)


@kernel("Neg", dtypes={"DT_BF16", "DT_FLOAT16", "DT_FLOAT", "DT_DOUBLE", "DT_INT32", "DT_INT64", "DT_COMPLEX64",
                       "DT_COMPLEX128"}, source=f"{RAW_OPS}:10952 REG_OP(Neg)")
def neg(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    return -required(op, inputs, 0)


@kernel("Rsqrt", dtypes=UNARY, source=f"{RAW_OPS}:11166 REG_OP(Rsqrt), UnaryDataType() ({METADEF})")
def rsqrt(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    return torch.rsqrt(required(op, inputs, 0))


@kernel("Pow", dtypes=REAL, source=f"{RAW_OPS}:13342 REG_OP(Pow) (T1: real numbers)")
def pow_(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x1 ** x2, broadcast, in x1's dtype."""
    x1, x2 = required(op, inputs, 0), required(op, inputs, 1)
    return torch.pow(x1, x2).to(x1.dtype)


@kernel("Greater", dtypes=REAL, same_dtype=X1_X2,
        source=f"{RAW_OPS}:12280 REG_OP(Greater), RealNumberType() ({METADEF}); x1, x2 one dtype: {_VERIFY} "
               "GreaterVerify")
def greater(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x1 > x2, broadcast: a bool tensor."""
    return torch.gt(required(op, inputs, 0), required(op, inputs, 1))


@kernel("GreaterEqual", dtypes=REAL, same_dtype=X1_X2,
        source=f"{RAW_OPS}:10014 REG_OP(GreaterEqual), RealNumberType() ({METADEF}); {_HEADER}")
def greater_equal(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x1 >= x2, broadcast: a bool tensor."""
    return torch.ge(required(op, inputs, 0), required(op, inputs, 1))


@kernel("Less", dtypes=REAL, same_dtype=X1_X2,
        source=f"{RAW_OPS}:10053 REG_OP(Less), RealNumberType() ({METADEF}); {_HEADER}")
def less(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x1 < x2, broadcast: a bool tensor."""
    return torch.lt(required(op, inputs, 0), required(op, inputs, 1))


@kernel("LessEqual", dtypes=REAL, same_dtype=X1_X2,
        source=f"{RAW_OPS}:10773 REG_OP(LessEqual), RealNumberType() ({METADEF}); {_HEADER}")
def less_equal(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x1 <= x2, broadcast: a bool tensor."""
    return torch.le(required(op, inputs, 0), required(op, inputs, 1))


@kernel("NotEqual", dtypes=REAL, same_dtype=X1_X2,
        source=f"{RAW_OPS}:10882 REG_OP(NotEqual), RealNumberType() ({METADEF}); x1, x2 one dtype: CANN ops-math "
               "not_equal_proto.h (\"x2 ... the data type is the same as x1\", broadcasting)")
def not_equal(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x1 != x2, broadcast: a bool tensor (NaN differs from everything, itself included)."""
    return torch.ne(required(op, inputs, 0), required(op, inputs, 1))


@kernel("Minimum", dtypes=_MIN_MAX, same_dtype=X1_X2, source=f"{RAW_OPS}:10197 REG_OP(Minimum); {_HEADER}")
def minimum(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """The smaller of x1 and x2 element-wise, broadcast (NaN if either is NaN, as torch.minimum)."""
    return torch.minimum(required(op, inputs, 0), required(op, inputs, 1))


@kernel("Maximum", dtypes=_MIN_MAX, same_dtype=X1_X2, source=f"{RAW_OPS}:10160 REG_OP(Maximum); {_HEADER}")
def maximum(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """The larger of x1 and x2 element-wise, broadcast."""
    return torch.maximum(required(op, inputs, 0), required(op, inputs, 1))


@kernel("Abs", dtypes={"DT_FLOAT16", "DT_BF16", "DT_FLOAT", "DT_DOUBLE", "DT_INT8", "DT_INT16", "DT_INT32",
                       "DT_INT64"}, source=f"{RAW_OPS}:10341 REG_OP(Abs)")
def abs_(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """|x| in x's dtype."""
    return torch.abs(required(op, inputs, 0))


def _log_params(op: OpView) -> tuple[float, float, float]:
    """``base`` (-1: e; else > 0), ``scale``, ``shift``: the attrs ``Exp``'s and ``Log``'s REG_OPs share."""
    base = op.f("base", -1.0)
    if base != -1.0 and base <= 0:
        raise op.fail(f"base must be -1 (e) or positive, got {base}")
    return base, op.f("scale", 1.0), op.f("shift", 0.0)


@kernel("Exp", dtypes=UNARY, source=f"{RAW_OPS}:10596 REG_OP(Exp), UnaryDataType() ({METADEF})")
def exp(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """base ** (scale * x + shift), base e when ``base`` is -1 (the defaults: e ** x)."""
    base, scale, shift = _log_params(op)
    x = required(op, inputs, 0)
    z = x * scale + shift if (scale, shift) != (1.0, 0.0) else x
    return torch.exp(z) if base == -1.0 else torch.pow(base, z).to(x.dtype)


@kernel("Log", dtypes=_LOG_X, source=f"{RAW_OPS}:11590 REG_OP(Log) (y: UnaryDataType(), {METADEF})")
def log(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """log_base(scale * x + shift), natural when ``base`` is -1 (the defaults: ln x); an integer or bool x gives a
    float32 y (y's types are UnaryDataType's, floats and complex)."""
    base, scale, shift = _log_params(op)
    x = required(op, inputs, 0)
    x = x if x.is_floating_point() or x.is_complex() else x.float()
    z = x * scale + shift if (scale, shift) != (1.0, 0.0) else x
    y = torch.log(z)
    return y if base == -1.0 else y / torch.log(torch.tensor(base, dtype=y.real.dtype))


@kernel("Sqrt", dtypes={"DT_BF16", "DT_FLOAT", "DT_FLOAT16", "DT_DOUBLE", "DT_COMPLEX64", "DT_COMPLEX128"},
        source=f"{RAW_OPS}:10127 REG_OP(Sqrt)")
def sqrt(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    return torch.sqrt(required(op, inputs, 0))


@kernel("Cos", dtypes=UNARY, source=f"{RAW_OPS}:10481 REG_OP(Cos), UnaryDataType() ({METADEF})")
def cos(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    return torch.cos(required(op, inputs, 0))


@kernel("Sin", dtypes=UNARY, source=f"{RAW_OPS}:13445 REG_OP(Sin), UnaryDataType() ({METADEF})")
def sin(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    return torch.sin(required(op, inputs, 0))


@kernel("LogicalAnd", dtypes={"DT_BOOL"}, same_dtype=X1_X2, source=f"{RAW_OPS}:11479 REG_OP(LogicalAnd)")
def logical_and(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x1 and x2, broadcast (both bool: their REG_OP lists only DT_BOOL)."""
    return torch.logical_and(required(op, inputs, 0), required(op, inputs, 1))


@kernel("BitwiseAnd", dtypes=_INTEGER, same_dtype=X1_X2,
        source=f"{RAW_OPS}:13087 REG_OP(BitwiseAnd), IntegerDataType() ({METADEF}); {_HEADER}")
def bitwise_and(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x1 & x2 bit by bit, broadcast."""
    return torch.bitwise_and(required(op, inputs, 0), required(op, inputs, 1))


@kernel("Invert", dtypes=_INTEGER, source=f"{RAW_OPS}:12175 REG_OP(Invert), IntegerDataType() ({METADEF})")
def invert(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """~x bit by bit."""
    return torch.bitwise_not(required(op, inputs, 0))


@kernel("LogicalNot", dtypes={"DT_BOOL"}, source=f"{RAW_OPS}:12351 REG_OP(LogicalNot)")
def logical_not(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """not x."""
    return torch.logical_not(required(op, inputs, 0))


@kernel("Cast", dtypes=ALL, source=f"{_GE_GRAPH}:1609 REG_OP(Cast)")
def cast(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x converted to ``dst_type`` (an Int attr in GE's C++ numbering; floats to integers round toward zero)."""
    return required(op, inputs, 0).to(op.dt("dst_type"))


@kernel("Real", dtypes=_COMPLEX, source=f"{RAW_OPS}:35934 REG_OP(Real)")
def real(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """The real part of a complex tensor, as ``Tout`` (float for complex64, double for complex128; default float)."""
    return _part(op, required(op, inputs, 0).real)


@kernel("Imag", dtypes=_COMPLEX, source=f"{RAW_OPS}:36853 REG_OP(Imag)")
def imag(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """The imaginary part of a complex tensor, as ``Tout`` (float for complex64, double for complex128)."""
    return _part(op, required(op, inputs, 0).imag)


def _part(op: OpView, part: torch.Tensor) -> torch.Tensor:
    out = op.dt("Tout") if op.has("Tout") else torch.float32
    if out not in (torch.float32, torch.float64):
        raise op.fail(f"Tout must be DT_FLOAT or DT_DOUBLE (REG_OP's output types), got {out}")
    return part.to(out).contiguous()
