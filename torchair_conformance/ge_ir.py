"""The suite's own GE IR reader (EX-7): message classes built from ``ge_ir.desc``, the suite's schema of GE_IR.md.

``ge_ir.proto`` beside this module is the schema subset docs/GE_IR.md lists, transcribed by the suite; protoc
compiles it into ``ge_ir.desc`` (a serialized ``FileDescriptorSet``, rebuilt by ``python -m tests.ge_ir_descriptors``
and checked against protoc by ``tests/test_ge_ir_descriptors.py``). The classes are made at import in a private
descriptor pool by the runtime's message factory, so no generated code, no ``protoc`` at run time and nothing of the
implementation under test is involved: the same reader serves the reference and upstream TorchAir. Unknown fields of
a real GE file are kept and ignored, as protobuf does.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from typing import Any

import torch
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

__all__ = ["ModelDef", "GraphDef", "OpDef", "TensorDescriptor", "AttrDef", "PROTO_DATA_TYPES", "CPP_DATA_TYPES",
           "proto_dtype", "proto_dtype_name", "cpp_dtype", "cpp_dtype_name", "parse_model", "ops_by_type"]

PACKAGE = "ge.proto"
DESCRIPTOR_FILE = "ge_ir.desc"


def _pool() -> descriptor_pool.DescriptorPool:
    """A private pool holding every file of the suite's ``FileDescriptorSet`` (never the default pool, where
    upstream TorchAir registers its own ``ge.proto``)."""
    source = resources.files(__package__).joinpath(DESCRIPTOR_FILE)
    try:
        data = source.read_bytes()
    except FileNotFoundError as exc:
        raise FileNotFoundError(
            f"{source} is missing: the suite's GE IR classes are built from it. Reinstall torchair-conformance, or "
            "in a checkout regenerate it with `python -m tests.ge_ir_descriptors`"
        ) from exc
    pool = descriptor_pool.DescriptorPool()
    for file in descriptor_pb2.FileDescriptorSet.FromString(data).file:
        pool.AddSerializedFile(file.SerializeToString())
    return pool


def _message_class(name: str) -> Any:
    desc = _POOL.FindMessageTypeByName(f"{PACKAGE}.{name}")
    if hasattr(message_factory, "GetMessageClass"):  # protobuf >= 4.22
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory(_POOL).GetPrototype(desc)  # protobuf 4.21


_POOL = _pool()
ModelDef = _message_class("ModelDef")
GraphDef = _message_class("GraphDef")
OpDef = _message_class("OpDef")
TensorDescriptor = _message_class("TensorDescriptor")
AttrDef = _message_class("AttrDef")

# GE_IR.md, "Two numberings of data types": the protobuf enum ``DataType`` (TensorDescriptor.dtype, the names in
# dynamo.pbtxt), as the suite's ge_ir.proto declares it ...
PROTO_DATA_TYPES: dict[str, int] = {
    value.name: value.number for value in _POOL.FindEnumTypeByName(f"{PACKAGE}.DataType").values
}
# ... and GE's C++ ``ge::DataType``, held by every ``dt`` attr (FileConstant's ``dtype``, Cast's ``dst_type``).
CPP_DATA_TYPES: dict[str, int] = {
    "DT_FLOAT": 0, "DT_FLOAT16": 1, "DT_INT8": 2, "DT_INT32": 3, "DT_UINT8": 4, "DT_INT16": 6, "DT_UINT16": 7,
    "DT_UINT32": 8, "DT_INT64": 9, "DT_UINT64": 10, "DT_DOUBLE": 11, "DT_BOOL": 12, "DT_STRING": 13,
    "DT_COMPLEX64": 16, "DT_COMPLEX128": 17, "DT_BF16": 27, "DT_UNDEFINED": 28, "DT_INT4": 29, "DT_COMPLEX32": 33,
    "DT_HIFLOAT8": 34, "DT_FLOAT8_E5M2": 35, "DT_FLOAT8_E4M3FN": 36, "DT_FLOAT8_E8M0": 37,
}  # fmt: skip

_TORCH_DTYPES = {
    torch.float32: "DT_FLOAT", torch.float16: "DT_FLOAT16", torch.bfloat16: "DT_BF16", torch.float64: "DT_DOUBLE",
    torch.int8: "DT_INT8", torch.uint8: "DT_UINT8", torch.int16: "DT_INT16", torch.int32: "DT_INT32",
    torch.int64: "DT_INT64", torch.bool: "DT_BOOL", torch.complex64: "DT_COMPLEX64",
    torch.complex128: "DT_COMPLEX128",
}  # fmt: skip
_PROTO_NAMES = {v: k for k, v in PROTO_DATA_TYPES.items()}
_CPP_NAMES = {v: k for k, v in CPP_DATA_TYPES.items()}


def proto_dtype(dtype: torch.dtype) -> int:
    """The protobuf ``DataType`` number of a torch dtype (what a ``TensorDescriptor.dtype`` holds)."""
    return PROTO_DATA_TYPES[_TORCH_DTYPES[dtype]]


def cpp_dtype(dtype: torch.dtype) -> int:
    """GE's C++ ``ge::DataType`` number of a torch dtype (what a ``dt`` attr holds, EX-6)."""
    return CPP_DATA_TYPES[_TORCH_DTYPES[dtype]]


def proto_dtype_name(dtype: torch.dtype | int) -> str:
    """``DT_...`` for a torch dtype or a protobuf ``DataType`` number."""
    if isinstance(dtype, torch.dtype):
        return _TORCH_DTYPES[dtype]
    return _PROTO_NAMES.get(dtype, str(dtype))


def cpp_dtype_name(dtype: torch.dtype | int) -> str:
    """``DT_...`` for a torch dtype or a C++ ``ge::DataType`` number (a ``dt`` attr)."""
    if isinstance(dtype, torch.dtype):
        return _TORCH_DTYPES[dtype]
    return _CPP_NAMES.get(dtype, str(dtype))


def parse_model(data: bytes) -> Any:
    """EX-7: bytes of an ``.air`` file as a ``ModelDef`` (``google.protobuf.message.DecodeError`` if they are not)."""
    model = ModelDef()
    model.ParseFromString(data)
    return model


def ops_by_type(graph: Any, op_type: str) -> Sequence[Any]:
    """The ops of ``graph`` whose type is ``op_type``, in graph order."""
    return [op for op in graph.op if op.type == op_type]
