"""EX-11, IMPL-4: GE element-wise activation kernels (CANN semantics): ``Relu``, ``Tanh``, ``Sigmoid``, ``Gelu``,
``GeluV2``, ``Swish``, ``HardSigmoid``, ``HardSwish``.

``GeluV2``'s registration names its type ``"T"``; its semantics and types are CANN's (aclnnGeluQuant: "GeluV2 ...
approximate = tanh | none", bfloat16/float16/float32).
"""

from __future__ import annotations

import math

import torch

from ge_executor.registry import FLOATS, RAW_OPS, UNARY, OpView, kernel, required

_GELU_V2_DOC = "hiascend.com CANN aclnnGeluQuant (GeluV2: approximate none = erf, tanh = tanh form)"


@kernel("Relu", dtypes={"DT_FLOAT", "DT_FLOAT16", "DT_DOUBLE", "DT_INT8", "DT_INT32", "DT_INT16", "DT_INT64",
                        "DT_UINT8", "DT_UINT16", "DT_BF16"},
        source=f"{RAW_OPS}:62214 REG_OP(Relu) (bf16: CANN's Relu operator docs)")
def relu(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """max(x, 0)."""
    return torch.relu(required(op, inputs, 0))


@kernel("Tanh", dtypes=UNARY, source=f"{RAW_OPS}:62181 REG_OP(Tanh), TensorType::UnaryDataType()")
def tanh(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """tanh(x)."""
    return torch.tanh(required(op, inputs, 0))


@kernel("Sigmoid", dtypes=UNARY, source=f"{RAW_OPS}:62409 REG_OP(Sigmoid), TensorType::UnaryDataType()")
def sigmoid(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """1 / (1 + exp(-x))."""
    return torch.sigmoid(required(op, inputs, 0))


@kernel("Gelu", dtypes=FLOATS, source=f"{RAW_OPS}:61754 REG_OP(Gelu)")
def gelu(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """CANN's Gelu is the tanh approximation, 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))); it has no ``approximate``
    attr (the aten converter drops it)."""
    x = required(op, inputs, 0)
    inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3))
    return 0.5 * x * (1.0 + torch.tanh(inner))


@kernel("GeluV2", dtypes=FLOATS, source=f"{RAW_OPS}:81 REG_OP(GeluV2); {_GELU_V2_DOC}")
def gelu_v2(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """GELU with attr ``approximate``: ``"none"`` (default) is 0.5x(1 + erf(x/sqrt 2)), ``"tanh"`` the tanh form."""
    approximate = op.s("approximate", b"none").decode()
    if approximate not in ("none", "tanh"):
        raise op.fail(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    return torch.nn.functional.gelu(required(op, inputs, 0), approximate=approximate)


@kernel("Swish", dtypes=FLOATS, source=f"{RAW_OPS}:61920 REG_OP(Swish)")
def swish(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x * sigmoid(scale * x), ``scale`` default 1.0 (SiLU)."""
    x = required(op, inputs, 0)
    return x * torch.sigmoid(op.f("scale", 1.0) * x)


@kernel("HardSigmoid", dtypes={"DT_FLOAT", "DT_FLOAT16", "DT_INT32"},
        source=f"{RAW_OPS}:63569 REG_OP(HardSigmoid) (output_y: DT_FLOAT, DT_FLOAT16)")
def hard_sigmoid(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """max(0, min(1, alpha * x + beta)), attrs ``alpha`` (default 0.16666666) and ``beta`` (0.5); an int32 x gives
    float32 (the output's types are float ones)."""
    x = required(op, inputs, 0)
    x = x if x.is_floating_point() else x.float()
    return torch.clamp(x * op.f("alpha", 0.16666666) + op.f("beta", 0.5), 0.0, 1.0)


@kernel("HardSwish", dtypes={"DT_FLOAT16", "DT_FLOAT"}, source=f"{RAW_OPS}:61849 REG_OP(HardSwish)")
def hard_swish(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x * min(max(x + 3, 0), 6) / 6."""
    x = required(op, inputs, 0)
    return x * torch.clamp(x + 3.0, 0.0, 6.0) / 6.0
