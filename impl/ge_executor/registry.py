"""EX-11, IMPL-4: the GE executor's kernel registry, attrs and data types: what a kernel module builds on.

A kernel is a function ``(op: OpView, inputs: list[Tensor | None]) -> Tensor | tuple[Tensor, ...]`` registered for
one GE op type with ``@kernel("Type", dtypes=..., source=...)``. ``dtypes`` is the set of GE type names (``DT_...``)
the op's registration accepts for its first data input, and ``source`` names where that set comes from (the op's
``REG_OP`` in the wheel, or CANN's operator documentation), so a draw an NPU would reject is rejected here too.
Kernels live in ``ge_executor.kernels``, one module per op family, each listed in ``kernels.FAMILIES``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ge_executor import ge_ir
from ge_executor.errors import GraphCheckError, mismatched_dtypes, unsupported_dtype

__all__ = ["KERNELS", "Kernel", "OpView", "kernel", "ge_name", "torch_dtype", "required", "input_ints", "RAW_OPS",
           "METADEF", "FLOATS", "UNARY", "REAL", "BASIC", "ALL", "INDEX"]

KernelFn = Callable[["OpView", list[torch.Tensor | None]], torch.Tensor | tuple[torch.Tensor, ...]]

#: where most dtype sets come from: the op registrations (REG_OP docstrings) generated into the wheel
RAW_OPS = "torch_npu-2.14.0 torchair/_ge_concrete_graph/auto_generated_ge_raw_ops.py"

#: where the ``TensorType::X()`` sets the registrations name are spelled out
METADEF = "CANN metadef docs/api/TensorType.md"
# TensorType sets (METADEF); the quantized and resource types have no torch dtype and never reach a kernel here
FLOATS = frozenset({"DT_FLOAT", "DT_FLOAT16", "DT_BF16"})  # TensorType::FLOAT()
UNARY = FLOATS | {"DT_DOUBLE", "DT_COMPLEX64", "DT_COMPLEX128"}  # UnaryDataType()
REAL = FLOATS | {"DT_DOUBLE", "DT_INT8", "DT_INT16", "DT_INT32", "DT_INT64", "DT_UINT8", "DT_UINT16", "DT_UINT32",
                 "DT_UINT64"}  # RealNumberType()
BASIC = REAL | {"DT_COMPLEX64", "DT_COMPLEX128"}  # BasicType(), also NumberType() here
ALL = BASIC | {"DT_BOOL"}  # ALL(), less string and resource
INDEX = frozenset({"DT_INT32", "DT_INT64"})  # IndexNumberType()

_TORCH_DTYPES = (
    torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.uint8, torch.int16,
    torch.uint16, torch.int32, torch.uint32, torch.int64, torch.uint64, torch.bool, torch.complex64,
    torch.complex128)  # fmt: skip


def ge_name(dtype: torch.dtype) -> str:
    """``DT_...`` of a torch dtype (GE_IR.md); TypeError for one GE has no type for."""
    name = ge_ir.proto_dtype_name(ge_ir.proto_dtype(dtype))
    if name is None:
        raise TypeError(f"GE IR has no data type for torch dtype {dtype}")
    return name


_BY_GE_NAME: dict[str, torch.dtype] = {ge_name(d): d for d in _TORCH_DTYPES}


def torch_dtype(name: str | None, what: str) -> torch.dtype:
    """The torch dtype of the GE type ``name``; GraphCheckError naming ``what`` when torch has none on CPU."""
    if name not in _BY_GE_NAME:
        raise GraphCheckError(f"{what}: GE data type {name} has no CPU torch dtype here; "
                              f"supported: {sorted(_BY_GE_NAME)}")
    return _BY_GE_NAME[name]


def required(op: OpView, inputs: Sequence[torch.Tensor | None], index: int) -> torch.Tensor:
    """Data input ``index``, one the op cannot compute without: GraphCheckError naming it where the graph omits it
    (an ``""`` edge, passed to the kernel as ``None``). A graph with fewer input slots fails as indexing does."""
    tensor = inputs[index]
    if tensor is None:
        raise op.fail(f"{op.input_name(index)} is a required input, but the graph omits it")
    return tensor


def input_ints(tensor: torch.Tensor | None, op: OpView, what: str) -> list[int]:
    """A 0-d or 1-d integer tensor input as a Python list (shapes, perms, sizes, axes)."""
    if tensor is None:
        raise op.fail(f"its {what} input is missing")
    if tensor.is_floating_point() or tensor.dim() > 1:
        raise op.fail(f"its {what} input must be a 0-d or 1-d integer tensor, got {tensor.dtype} {list(tensor.shape)}")
    return [int(v) for v in tensor.reshape(-1).tolist()]


@dataclass(frozen=True)
class Kernel:
    """One op type's CPU implementation and its declared dtype signature, from the op's registration: ``dtypes``,
    the types input ``checked`` accepts (``None``: not checked), and ``same_dtype``, groups of input positions that
    one type variable types (``REG_OP``'s ``"T"``, or a verifier that requires one dtype), which must agree."""

    op_type: str
    fn: KernelFn
    dtypes: frozenset[str] | None
    source: str
    checked: int = 0
    same_dtype: tuple[tuple[int, ...], ...] = ()

    def check_dtype(self, op_name: str, dtype_name: str) -> None:
        """Reject a dtype of input ``checked`` that the op's registration does not list."""
        if self.dtypes is not None and dtype_name not in self.dtypes:
            raise unsupported_dtype(self.op_type, op_name, dtype_name, self.dtypes, self.source)

    def check_inputs(self, op: OpView, inputs: Sequence[torch.Tensor | None]) -> None:
        """The dtype signature on the real tensors: input ``checked``'s type, and each ``same_dtype`` group."""
        first = inputs[self.checked] if self.checked < len(inputs) else None
        if first is not None:
            self.check_dtype(op.name, ge_name(first.dtype))
        for group in self.same_dtype:
            present = [(k, t) for k in group if k < len(inputs) and (t := inputs[k]) is not None]
            if len({t.dtype for _, t in present}) > 1:
                raise mismatched_dtypes(self.op_type, op.name, [(op.input_name(k), ge_name(t.dtype))
                                                                for k, t in present], self.source)


KERNELS: dict[str, Kernel] = {}


def kernel(op_type: str, *, dtypes: Iterable[str] | None, source: str, checked: int = 0,
           same_dtype: Sequence[Sequence[int]] = ()) -> Callable[[KernelFn], KernelFn]:
    """Register the decorated function as the CPU kernel of ``op_type`` (one kernel per type), with the dtype
    signature its registration declares (``Kernel``); ``source`` names that registration (the wheel's REG_OP)."""

    def register(fn: KernelFn) -> KernelFn:
        if op_type in KERNELS:
            raise ValueError(f"GE op {op_type} already has a kernel: {KERNELS[op_type].fn.__module__}")
        KERNELS[op_type] = Kernel(op_type, fn, None if dtypes is None else frozenset(dtypes), source, checked,
                                  tuple(tuple(group) for group in same_dtype))
        return fn

    return register


class OpView:
    """Read access to one ``OpDef``'s name, type and attrs, with GE's defaults where the attr is absent."""

    def __init__(self, op: Any, weights_dir: Path | None = None) -> None:
        self.op = op
        self.weights_dir = weights_dir  # where a relative FileConstant path is resolved
        self.name: str = op.name
        self.type: str = op.type

    def has(self, key: str) -> bool:
        return key in self.op.attr

    def _get(self, key: str, default: Any, field: str) -> Any:
        if key not in self.op.attr:
            if default is _REQUIRED:
                raise GraphCheckError(f"op {self.type} ({self.name!r}) lacks its required attr {key!r}")
            return default
        return getattr(self.op.attr[key], field)

    def i(self, key: str, default: Any = None) -> int:
        value: int = self._get(key, _REQUIRED if default is None else default, "i")
        return value

    def f(self, key: str, default: Any = None) -> float:
        value: float = self._get(key, _REQUIRED if default is None else default, "f")
        return value

    def b(self, key: str, default: Any = None) -> bool:
        value: bool = self._get(key, _REQUIRED if default is None else default, "b")
        return value

    def s(self, key: str, default: Any = None) -> bytes:
        value: bytes = self._get(key, _REQUIRED if default is None else default, "s")
        return value

    def dt(self, key: str, default: int | None = None) -> torch.dtype:
        """A data-type attr as a torch dtype. GE writes it in its C++ numbering (GE_IR.md), either as a ``dt`` attr
        (FileConstant's ``dtype``) or as an ``Int`` one (``REG_OP``'s ``ATTR(dtype, Int, DT_INT32)``: Shape's
        ``dtype``, Cast's ``dst_type``, ge/_ge_graph.py:1633); both fields are read."""
        if key in self.op.attr and self.op.attr[key].WhichOneof("value") in ("dt", "i"):
            value = getattr(self.op.attr[key], self.op.attr[key].WhichOneof("value"))
        elif key not in self.op.attr and default is not None:
            value = default
        else:
            raise GraphCheckError(f"op {self.type} ({self.name!r}) lacks its data-type attr {key!r} (dt or int)")
        return torch_dtype(ge_ir.cpp_dtype_name(value), f"op {self.type} ({self.name!r}) attr {key}={value}")

    def ints(self, key: str, default: Sequence[int] | None = None) -> list[int]:
        if key not in self.op.attr and default is not None:
            return list(default)
        return list(self._get(key, _REQUIRED, "list").i)

    def input_name(self, index: int) -> str:
        """The name GE gives data input ``index`` (its input desc's name, e.g. ``x1``), else ``input <index>``."""
        descs = self.op.input_desc
        return descs[index].name if index < len(descs) and descs[index].name else f"input {index}"

    def output_desc(self, index: int) -> Any:
        return self.op.output_desc[index] if index < len(self.op.output_desc) else None

    def fail(self, why: str) -> GraphCheckError:
        return GraphCheckError(f"op {self.type} ({self.name!r}): {why}")


_REQUIRED = object()
