"""The suite's own GE IR reader (EX-7): message classes built from a table of ``docs/GE_IR.md``.

The table below is the schema subset GE_IR.md lists (field = number : type); the classes are made at import with
``descriptor_pb2`` and ``message_factory`` in a private descriptor pool, so no generated code, no ``protoc`` and
nothing of the implementation under test is involved: the same reader serves the reference and upstream TorchAir.
Unknown fields of a real GE file are kept and ignored, as protobuf does.
"""

from __future__ import annotations

from typing import Any, Dict, List, Sequence, Tuple

import torch
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

__all__ = ["ModelDef", "GraphDef", "OpDef", "TensorDescriptor", "AttrDef", "PROTO_DATA_TYPES", "CPP_DATA_TYPES",
           "proto_dtype", "proto_dtype_name", "cpp_dtype", "cpp_dtype_name", "parse_model", "ops_by_type"]

PACKAGE = "ge.proto"

# message -> [(field, number, type)]; type is a scalar name, a message name, "repeated X" or "map<string, X>".
# A "oneof NAME" entry opens a oneof that the following fields up to the message's end belong to.
_MESSAGES: Dict[str, List[Tuple[str, int, str]]] = {
    "ModelDef": [("name", 1, "string"), ("version", 2, "uint32"), ("custom_version", 3, "string"),
                 ("graph", 7, "repeated GraphDef"), ("attr", 11, "map<string, AttrDef>")],
    "GraphDef": [("name", 1, "string"), ("input", 4, "repeated string"), ("output", 5, "repeated string"),
                 ("op", 6, "repeated OpDef"), ("attr", 11, "map<string, AttrDef>")],
    "OpDef": [("name", 1, "string"), ("type", 2, "string"), ("input", 5, "repeated string"),
              ("attr", 10, "map<string, AttrDef>"), ("id", 21, "int64"),
              ("input_desc", 33, "repeated TensorDescriptor"), ("output_desc", 34, "repeated TensorDescriptor")],
    "TensorDescriptor": [("name", 1, "string"), ("dtype", 2, "DataType"), ("shape", 3, "ShapeDef"),
                         ("layout", 4, "string"), ("attr", 5, "map<string, AttrDef>"), ("size", 10, "int64"),
                         ("real_dim_cnt", 16, "int64"), ("data_offset", 18, "int64")],
    "ShapeDef": [("dim", 1, "repeated int64")],
    "TensorDef": [("desc", 1, "TensorDescriptor"), ("data", 2, "bytes")],
    "NamedAttrs": [("name", 1, "string"), ("attr", 2, "map<string, AttrDef>")],
    "AttrDef": [("oneof", 0, "value"), ("list", 1, "ListValue"), ("s", 2, "bytes"), ("i", 3, "int64"),
                ("f", 4, "float"), ("b", 5, "bool"), ("bt", 7, "bytes"), ("func", 10, "NamedAttrs"),
                ("td", 11, "TensorDescriptor"), ("t", 12, "TensorDef"), ("g", 13, "GraphDef"), ("dt", 15, "int64")],
    "ListValue": [("s", 2, "repeated bytes"), ("i", 3, "repeated int64"), ("f", 4, "repeated float"),
                  ("b", 5, "repeated bool"), ("bt", 7, "repeated bytes"), ("td", 8, "repeated TensorDescriptor"),
                  ("t", 9, "repeated TensorDef"), ("g", 10, "repeated GraphDef"), ("na", 11, "repeated NamedAttrs"),
                  ("dt", 12, "repeated int64"), ("val_type", 20, "ListValueType")],
}
# GE_IR.md nests ListValue (and its enum) in AttrDef: ``AttrDef.ListValue``.
_NESTED = {"ListValue": "AttrDef"}

# GE_IR.md, "Two numberings of data types": the protobuf enum ``DataType`` (TensorDescriptor.dtype, the names in
# dynamo.pbtxt) ...
PROTO_DATA_TYPES: Dict[str, int] = {
    "DT_UNDEFINED": 0, "DT_FLOAT": 1, "DT_FLOAT16": 2, "DT_INT8": 3, "DT_UINT8": 4, "DT_INT16": 5, "DT_UINT16": 6,
    "DT_INT32": 7, "DT_INT64": 8, "DT_UINT32": 9, "DT_UINT64": 10, "DT_BOOL": 11, "DT_DOUBLE": 12, "DT_STRING": 13,
    "DT_COMPLEX64": 16, "DT_COMPLEX128": 17, "DT_BF16": 27, "DT_INT4": 28, "DT_COMPLEX32": 32, "DT_HIFLOAT8": 33,
    "DT_FLOAT8_E5M2": 34, "DT_FLOAT8_E4M3FN": 35, "DT_FLOAT8_E8M0": 36,
}  # fmt: skip
# ... and GE's C++ ``ge::DataType``, held by every ``dt`` attr (FileConstant's ``dtype``, Cast's ``dst_type``).
CPP_DATA_TYPES: Dict[str, int] = {
    "DT_FLOAT": 0, "DT_FLOAT16": 1, "DT_INT8": 2, "DT_INT32": 3, "DT_UINT8": 4, "DT_INT16": 6, "DT_UINT16": 7,
    "DT_UINT32": 8, "DT_INT64": 9, "DT_UINT64": 10, "DT_DOUBLE": 11, "DT_BOOL": 12, "DT_STRING": 13,
    "DT_COMPLEX64": 16, "DT_COMPLEX128": 17, "DT_BF16": 27, "DT_UNDEFINED": 28, "DT_INT4": 29, "DT_COMPLEX32": 33,
    "DT_HIFLOAT8": 34, "DT_FLOAT8_E5M2": 35, "DT_FLOAT8_E4M3FN": 36, "DT_FLOAT8_E8M0": 37,
}  # fmt: skip
_LIST_VALUE_TYPES = ["NONE", "STRING", "INT", "FLOAT", "BOOL", "BYTES", "TENSOR_DESC", "TENSOR", "GRAPH",
                     "NAMED_ATTRS", "DATA_TYPE"]
_ENUMS = {"DataType": list(PROTO_DATA_TYPES.items()),
          "ListValueType": [(f"VT_LIST_{name}", n) for n, name in enumerate(_LIST_VALUE_TYPES)]}
_ENUM_SCOPE = {"DataType": "", "ListValueType": "AttrDef.ListValue"}

_TORCH_DTYPES = {
    torch.float32: "DT_FLOAT", torch.float16: "DT_FLOAT16", torch.bfloat16: "DT_BF16", torch.float64: "DT_DOUBLE",
    torch.int8: "DT_INT8", torch.uint8: "DT_UINT8", torch.int16: "DT_INT16", torch.int32: "DT_INT32",
    torch.int64: "DT_INT64", torch.bool: "DT_BOOL", torch.complex64: "DT_COMPLEX64",
    torch.complex128: "DT_COMPLEX128",
}  # fmt: skip
_SCALARS = {
    "string": descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
    "bytes": descriptor_pb2.FieldDescriptorProto.TYPE_BYTES,
    "int64": descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
    "uint32": descriptor_pb2.FieldDescriptorProto.TYPE_UINT32,
    "float": descriptor_pb2.FieldDescriptorProto.TYPE_FLOAT,
    "bool": descriptor_pb2.FieldDescriptorProto.TYPE_BOOL,
}
_F = descriptor_pb2.FieldDescriptorProto


def _full(name: str) -> str:
    """The qualified name of a message or enum of the table."""
    if name in _ENUMS:
        scope = _ENUM_SCOPE[name]
        return f".{PACKAGE}.{scope + '.' if scope else ''}{name}"
    return f".{PACKAGE}.{_NESTED[name] + '.' if name in _NESTED else ''}{name}"


def _add_field(message: descriptor_pb2.DescriptorProto, name: str, number: int, kind: str,
               oneof: int | None) -> None:
    field = message.field.add(name=name, number=number, json_name=name)
    if kind.startswith("map<"):
        value = kind[len("map<string, "):-1]
        entry = message.nested_type.add(name=f"{name.title().replace('_', '')}Entry")
        entry.options.map_entry = True
        entry.field.add(name="key", number=1, label=_F.LABEL_OPTIONAL, type=_F.TYPE_STRING, json_name="key")
        entry.field.add(name="value", number=2, label=_F.LABEL_OPTIONAL, type=_F.TYPE_MESSAGE,
                        type_name=_full(value), json_name="value")
        field.label, field.type = _F.LABEL_REPEATED, _F.TYPE_MESSAGE
        field.type_name = f"{_full(message.name)}.{entry.name}"
        return
    repeated = kind.startswith("repeated ")
    kind = kind.removeprefix("repeated ")
    field.label = _F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL
    if kind in _SCALARS:
        field.type = _SCALARS[kind]
    elif kind in _ENUMS:
        field.type, field.type_name = _F.TYPE_ENUM, _full(kind)
    else:
        field.type, field.type_name = _F.TYPE_MESSAGE, _full(kind)
    if oneof is not None:
        field.oneof_index = oneof


def _message(name: str) -> descriptor_pb2.DescriptorProto:
    message = descriptor_pb2.DescriptorProto(name=name)
    oneof = None
    for field_name, number, kind in _MESSAGES[name]:
        if field_name == "oneof":
            message.oneof_decl.add(name=kind)
            oneof = len(message.oneof_decl) - 1
            continue
        _add_field(message, field_name, number, kind, oneof)
    return message


def _enum(name: str) -> descriptor_pb2.EnumDescriptorProto:
    return descriptor_pb2.EnumDescriptorProto(
        name=name, value=[descriptor_pb2.EnumValueDescriptorProto(name=k, number=v) for k, v in _ENUMS[name]])


def _file() -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto(name="conformance/ge_ir.proto", package=PACKAGE, syntax="proto3")
    proto.enum_type.append(_enum("DataType"))
    messages = {name: _message(name) for name in _MESSAGES}
    for name, message in messages.items():
        if name in _NESTED:
            continue
        for nested, parent in _NESTED.items():
            if parent == name:
                inner = messages[nested]
                inner.enum_type.append(_enum("ListValueType"))
                message.nested_type.append(inner)
        proto.message_type.append(message)
    return proto


def _classes() -> Dict[str, Any]:
    pool = descriptor_pool.DescriptorPool()
    pool.Add(_file())
    classes = {}
    for name in _MESSAGES:
        desc = pool.FindMessageTypeByName(_full(name)[1:])
        if hasattr(message_factory, "GetMessageClass"):  # protobuf >= 4.22
            classes[name] = message_factory.GetMessageClass(desc)
        else:  # protobuf 4.21
            classes[name] = message_factory.MessageFactory(pool).GetPrototype(desc)
    return classes


_CLASSES = _classes()
ModelDef = _CLASSES["ModelDef"]
GraphDef = _CLASSES["GraphDef"]
OpDef = _CLASSES["OpDef"]
TensorDescriptor = _CLASSES["TensorDescriptor"]
AttrDef = _CLASSES["AttrDef"]
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
