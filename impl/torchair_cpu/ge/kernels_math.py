"""IMPL-4: GE element-wise kernels: arithmetic with broadcasting and activations (CANN semantics)."""

from __future__ import annotations

import math

import torch

from torchair_cpu.ge.registry import FLOATS, RAW_OPS, UNARY, OpView, kernel

_ADD = {"DT_FLOAT", "DT_INT32", "DT_INT64", "DT_FLOAT16", "DT_BF16", "DT_INT16", "DT_INT8", "DT_UINT8",
        "DT_DOUBLE", "DT_COMPLEX128", "DT_COMPLEX64"}  # fmt: skip
_SUB = _ADD | {"DT_UINT16"}
# Mul's REG_OP in the wheel names only type variables ("T1", line 11630); CANN's elewise_calculation_ops.h lists the
# number types and bool for them, the set taken here.
_MUL = _SUB | {"DT_BOOL"}


@kernel("Add", dtypes=_ADD, source=f"{RAW_OPS}:11704 REG_OP(Add)")
def add(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x1 + x2 with broadcasting."""
    x1, x2 = inputs[0], inputs[1]
    return torch.add(x1, x2)


@kernel("Sub", dtypes=_SUB, source=f"{RAW_OPS}:10268 REG_OP(Sub)")
def sub(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x1 - x2 with broadcasting."""
    x1, x2 = inputs[0], inputs[1]
    return torch.sub(x1, x2)


@kernel("Mul", dtypes=_MUL, source=f"{RAW_OPS}:11630 REG_OP(Mul) (T1 from CANN elewise_calculation_ops.h)")
def mul(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x1 * x2 with broadcasting (bool: logical and, as torch.mul)."""
    x1, x2 = inputs[0], inputs[1]
    return torch.mul(x1, x2)


def _divide(x1: torch.Tensor, x2: torch.Tensor) -> torch.Tensor:
    """True division for floating inputs; for integer inputs CANN's Div/RealDiv keep the integer type and round
    toward zero."""
    if x1.is_floating_point() or x2.is_floating_point() or x1.is_complex() or x2.is_complex():
        return torch.div(x1, x2)
    return torch.div(x1, x2, rounding_mode="trunc")


@kernel("Div", dtypes=_SUB, source=f"{RAW_OPS}:10515 REG_OP(Div)")
def div(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x1 / x2 with broadcasting."""
    return _divide(inputs[0], inputs[1])


@kernel("RealDiv", dtypes=_SUB, source=f"{RAW_OPS}:10091 REG_OP(RealDiv)")
def real_div(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x1 / x2 with broadcasting."""
    return _divide(inputs[0], inputs[1])


@kernel("Relu", dtypes={"DT_FLOAT", "DT_FLOAT16", "DT_DOUBLE", "DT_INT8", "DT_INT32", "DT_INT16", "DT_INT64",
                        "DT_UINT8", "DT_UINT16", "DT_BF16"},
        source=f"{RAW_OPS}:62214 REG_OP(Relu) (bf16: CANN's Relu operator docs)")
def relu(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """max(x, 0)."""
    return torch.relu(inputs[0])


@kernel("Tanh", dtypes=UNARY, source=f"{RAW_OPS}:62181 REG_OP(Tanh), TensorType::UnaryDataType()")
def tanh(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """tanh(x)."""
    return torch.tanh(inputs[0])


@kernel("Sigmoid", dtypes=UNARY, source=f"{RAW_OPS}:62409 REG_OP(Sigmoid), TensorType::UnaryDataType()")
def sigmoid(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """1 / (1 + exp(-x))."""
    return torch.sigmoid(inputs[0])


@kernel("Gelu", dtypes=FLOATS, source=f"{RAW_OPS}:61754 REG_OP(Gelu)")
def gelu(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """CANN's Gelu is the tanh approximation, 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))); it has no ``approximate``
    attr (the aten converter drops it)."""
    x = inputs[0]
    inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3))
    return 0.5 * x * (1.0 + torch.tanh(inner))


@kernel("Swish", dtypes=FLOATS, source=f"{RAW_OPS}:61920 REG_OP(Swish)")
def swish(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x * sigmoid(scale * x), ``scale`` default 1.0 (SiLU)."""
    x = inputs[0]
    return x * torch.sigmoid(op.f("scale", 1.0) * x)


@kernel("LogicalNot", dtypes={"DT_BOOL"}, source=f"{RAW_OPS}:12351 REG_OP(LogicalNot)")
def logical_not(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """not x."""
    return torch.logical_not(inputs[0])
