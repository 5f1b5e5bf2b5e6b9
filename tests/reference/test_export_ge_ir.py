"""The GE IR schema (docs/GE_IR.md) as the exporter (with the GE executor's classes) and the suite's reader build it
from their compiled ge_ir.desc: numbers, types, wire format."""

from __future__ import annotations

import pytest
import torch
from google.protobuf import descriptor_pb2

from ge_executor import ge_ir
from torchair_conformance import ge_ir as suite_ge_ir

F = descriptor_pb2.FieldDescriptorProto

# Transcribed from docs/GE_IR.md, independently of either ge_ir.proto: field -> (number, type, repeated).
# A type is a scalar name, a message name, "map<AttrDef>" or "enum:<Name>".
GE_IR_TABLE = {
    "ModelDef": {
        "name": (1, "string", False), "version": (2, "uint32", False), "custom_version": (3, "string", False),
        "graph": (7, "GraphDef", True), "attr": (11, "map<AttrDef>", True),
    },
    "GraphDef": {
        "name": (1, "string", False), "input": (4, "string", True), "output": (5, "string", True),
        "op": (6, "OpDef", True), "attr": (11, "map<AttrDef>", True),
    },
    "OpDef": {
        "name": (1, "string", False), "type": (2, "string", False), "input": (5, "string", True),
        "attr": (10, "map<AttrDef>", True), "id": (21, "int64", False),
        "input_desc": (33, "TensorDescriptor", True), "output_desc": (34, "TensorDescriptor", True),
    },
    "TensorDescriptor": {
        "name": (1, "string", False), "dtype": (2, "enum:DataType", False), "shape": (3, "ShapeDef", False),
        "layout": (4, "string", False), "attr": (5, "map<AttrDef>", True), "size": (10, "int64", False),
        "real_dim_cnt": (16, "int64", False), "data_offset": (18, "int64", False),
    },
    "ShapeDef": {"dim": (1, "int64", True)},
    "TensorDef": {"desc": (1, "TensorDescriptor", False), "data": (2, "bytes", False)},
    "NamedAttrs": {"name": (1, "string", False), "attr": (2, "map<AttrDef>", True)},
    "AttrDef": {
        "list": (1, "ListValue", False), "s": (2, "bytes", False), "i": (3, "int64", False),
        "f": (4, "float", False), "b": (5, "bool", False), "bt": (7, "bytes", False),
        "func": (10, "NamedAttrs", False), "td": (11, "TensorDescriptor", False), "t": (12, "TensorDef", False),
        "g": (13, "GraphDef", False), "dt": (15, "int64", False),
    },
    "ListValue": {
        "s": (2, "bytes", True), "i": (3, "int64", True), "f": (4, "float", True), "b": (5, "bool", True),
        "bt": (7, "bytes", True), "td": (8, "TensorDescriptor", True), "t": (9, "TensorDef", True),
        "g": (10, "GraphDef", True), "na": (11, "NamedAttrs", True), "dt": (12, "int64", True),
        "val_type": (20, "enum:ListValueType", False),
    },
}  # fmt: skip
DATA_TYPES = {
    "DT_UNDEFINED": 0, "DT_FLOAT": 1, "DT_FLOAT16": 2, "DT_INT8": 3, "DT_UINT8": 4, "DT_INT16": 5,
    "DT_UINT16": 6, "DT_INT32": 7, "DT_INT64": 8, "DT_UINT32": 9, "DT_UINT64": 10, "DT_BOOL": 11,
    "DT_DOUBLE": 12, "DT_STRING": 13, "DT_COMPLEX64": 16, "DT_COMPLEX128": 17, "DT_BF16": 27, "DT_INT4": 28,
    "DT_COMPLEX32": 32, "DT_HIFLOAT8": 33, "DT_FLOAT8_E5M2": 34, "DT_FLOAT8_E4M3FN": 35, "DT_FLOAT8_E8M0": 36,
}  # fmt: skip
LIST_VALUE_TYPES = ["NONE", "STRING", "INT", "FLOAT", "BOOL", "BYTES", "TENSOR_DESC", "TENSOR", "GRAPH",
                    "NAMED_ATTRS", "DATA_TYPE"]  # fmt: skip
SCALAR_TYPES = {"string": F.TYPE_STRING, "bytes": F.TYPE_BYTES, "int64": F.TYPE_INT64, "uint32": F.TYPE_UINT32,
                "float": F.TYPE_FLOAT, "bool": F.TYPE_BOOL}  # fmt: skip
MESSAGES = {
    "ModelDef": ge_ir.ModelDef, "GraphDef": ge_ir.GraphDef, "OpDef": ge_ir.OpDef,
    "TensorDescriptor": ge_ir.TensorDescriptor, "ShapeDef": ge_ir.ShapeDef, "TensorDef": ge_ir.TensorDef,
    "NamedAttrs": ge_ir.NamedAttrs, "AttrDef": ge_ir.AttrDef, "ListValue": ge_ir.ListValue,
}  # fmt: skip
READERS = ("ge_executor", "torchair_conformance")


def _descriptors(reader: str) -> dict:
    """Message name -> descriptor, for the classes the reference writes with (the GE executor's) or, through its
    file, the suite's reader."""
    if reader == "ge_executor":
        return {name: cls.DESCRIPTOR for name, cls in MESSAGES.items()}
    by_name = dict(suite_ge_ir.ModelDef.DESCRIPTOR.file.message_types_by_name)
    by_name["ListValue"] = by_name["AttrDef"].nested_types_by_name["ListValue"]
    return by_name


def _repeated(field) -> bool:
    if hasattr(field, "is_repeated"):  # protobuf >= 6 dropped FieldDescriptor.label
        return field.is_repeated
    return field.label == F.LABEL_REPEATED


def _describe(field) -> str:
    if field.type == F.TYPE_MESSAGE and field.message_type.GetOptions().map_entry:
        key, value = field.message_type.fields_by_name["key"], field.message_type.fields_by_name["value"]
        assert key.type == F.TYPE_STRING, f"{field.full_name}: map key type {key.type}"
        return f"map<{value.message_type.name}>"
    if field.type == F.TYPE_MESSAGE:
        return field.message_type.name
    if field.type == F.TYPE_ENUM:
        return f"enum:{field.enum_type.name}"
    return next(name for name, t in SCALAR_TYPES.items() if t == field.type)


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("message", sorted(GE_IR_TABLE))
def test_message_fields_match_ge_ir_md(message, reader):
    """EX-7: every message has exactly GE_IR.md's fields, numbers, types and repetition, in the reference's schema
    and in the suite's own."""
    descriptor = _descriptors(reader)[message]
    found = {
        f.name: (f.number, _describe(f), _repeated(f)) for f in descriptor.fields
    }
    assert found == GE_IR_TABLE[message], f"{reader} {message}: found {found}, GE_IR.md says {GE_IR_TABLE[message]}"
    assert descriptor.full_name.startswith("ge.proto."), descriptor.full_name


@pytest.mark.parametrize("reader", READERS)
def test_attr_value_is_one_oneof(reader):
    """EX-7: AttrDef's fields all belong to the oneof ``value``."""
    oneofs = _descriptors(reader)["AttrDef"].oneofs_by_name
    assert list(oneofs) == ["value"], list(oneofs)
    members = sorted(f.name for f in oneofs["value"].fields)
    assert members == sorted(GE_IR_TABLE["AttrDef"]), members


def test_enums_match_ge_ir_md():
    """EX-7/EX-8: DataType and ListValueType values are GE_IR.md's."""
    assert dict(ge_ir.DataType.items()) == DATA_TYPES, dict(ge_ir.DataType.items())
    expected = {f"VT_LIST_{name}": i for i, name in enumerate(LIST_VALUE_TYPES)}
    assert dict(ge_ir.ListValueType.items()) == expected, dict(ge_ir.ListValueType.items())


def test_suite_enums_match_ge_ir_md():
    """EX-7/EX-8: the suite's reader declares GE_IR.md's DataType and ListValueType values too."""
    assert suite_ge_ir.PROTO_DATA_TYPES == DATA_TYPES, suite_ge_ir.PROTO_DATA_TYPES
    list_value = _descriptors("torchair_conformance")["ListValue"].enum_types_by_name["ListValueType"]
    found = {value.name: value.number for value in list_value.values}
    assert found == {f"VT_LIST_{name}": i for i, name in enumerate(LIST_VALUE_TYPES)}, found


def _varint(n: int) -> bytes:
    out = b""
    while True:
        low, n = n & 0x7F, n >> 7
        out += bytes([low | (0x80 if n else 0)])
        if not n:
            return out


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def test_reads_hand_encoded_wire_bytes():
    """EX-7: bytes encoded by hand from GE_IR.md's numbers parse into the expected ModelDef (what GE tools write)."""
    index_attr = _field(1, b"index") + _field(2, _varint(3 << 3) + _varint(2))  # map entry: key, AttrDef{i: 2}
    shape = _field(1, _varint(5) + _varint(4))  # ShapeDef.dim [5, 4], packed
    desc = _varint(2 << 3) + _varint(27) + _field(3, shape)  # dtype DT_BF16
    op = _field(1, b"x") + _field(2, b"Data") + _field(5, b"y:0") + _field(10, index_attr) + _field(34, desc)
    data = _field(1, b"m") + _field(7, _field(1, b"g") + _field(6, op))
    model = ge_ir.ModelDef.FromString(data)
    parsed = model.graph[0].op[0]
    found = (model.name, model.graph[0].name, parsed.name, parsed.type, list(parsed.input), parsed.attr["index"].i,
             ge_ir.DataType.Name(parsed.output_desc[0].dtype), list(parsed.output_desc[0].shape.dim))  # fmt: skip
    assert found == ("m", "g", "x", "Data", ["y:0"], 2, "DT_BF16", [5, 4]), found
    assert model.SerializeToString(deterministic=True) == ge_ir.ModelDef.FromString(
        model.SerializeToString()
    ).SerializeToString(deterministic=True)


def test_every_attr_kind_round_trips():
    """EX-7: each AttrDef kind survives serialisation."""
    graph = ge_ir.GraphDef(name="g")
    op = graph.op.add(name="op", type="T")
    op.attr["i"].i = -3
    op.attr["f"].f = 0.5
    op.attr["b"].b = True
    op.attr["s"].s = b"text"
    op.attr["bt"].bt = b"\x00\xff"
    op.attr["dt"].dt = ge_ir.DataType.Value("DT_BF16")
    op.attr["td"].td.dtype = ge_ir.DataType.Value("DT_INT8")
    op.attr["t"].t.data = b"\x01\x02"
    op.attr["func"].func.name = "f"
    op.attr["g"].g.name = "sub"
    op.attr["list"].list.i.extend([1, -1])
    op.attr["list"].list.val_type = ge_ir.ListValueType.Value("VT_LIST_INT")
    back = ge_ir.GraphDef.FromString(graph.SerializeToString()).op[0]
    kinds = {key: back.attr[key].WhichOneof("value") for key in back.attr}
    assert kinds == {k: k for k in ("i", "f", "b", "s", "bt", "dt", "td", "t", "func", "g", "list")}, kinds
    assert back == op, f"round trip changed the op:\n{back}\nvs\n{op}"


@pytest.mark.parametrize(
    "dtype, name",
    [(torch.float32, "DT_FLOAT"), (torch.float16, "DT_FLOAT16"), (torch.bfloat16, "DT_BF16"), (torch.int8, "DT_INT8"),
     (torch.uint8, "DT_UINT8"), (torch.int64, "DT_INT64"), (torch.bool, "DT_BOOL"), (torch.float64, "DT_DOUBLE"),
     (torch.complex64, "DT_COMPLEX64"), (torch.float8_e4m3fn, "DT_FLOAT8_E4M3FN")],  # fmt: skip
)
def test_torch_dtypes_map_to_ge(dtype, name):
    """EX-8: torch dtypes get GE's DataType, by the same name in both numberings."""
    assert ge_ir.DataType.Name(ge_ir.proto_dtype(dtype)) == name
    assert ge_ir.cpp_dtype_name(ge_ir.cpp_dtype(dtype)) == name


@pytest.mark.parametrize(
    "dtype, proto, cpp",
    [(torch.float32, 1, 0), (torch.float16, 2, 1), (torch.int8, 3, 2), (torch.int32, 7, 3), (torch.uint8, 4, 4),
     (torch.int64, 8, 9), (torch.float64, 12, 11), (torch.bool, 11, 12), (torch.bfloat16, 27, 27)],  # fmt: skip
)
def test_two_numberings(dtype, proto, cpp):
    """EX-6/EX-7: descriptors use the protobuf enum, dt attrs GE's C++ ge::DataType (GE_IR.md's two tables)."""
    assert (ge_ir.proto_dtype(dtype), ge_ir.cpp_dtype(dtype)) == (proto, cpp)


def test_cpp_numbering_is_ge_ir_md():
    """EX-6: the C++ ge::DataType table is GE_IR.md's, number for number."""
    assert ge_ir.CPP_DATA_TYPES == {
        "DT_FLOAT": 0, "DT_FLOAT16": 1, "DT_INT8": 2, "DT_INT32": 3, "DT_UINT8": 4, "DT_INT16": 6, "DT_UINT16": 7,
        "DT_UINT32": 8, "DT_INT64": 9, "DT_UINT64": 10, "DT_DOUBLE": 11, "DT_BOOL": 12, "DT_STRING": 13,
        "DT_COMPLEX64": 16, "DT_COMPLEX128": 17, "DT_BF16": 27, "DT_UNDEFINED": 28, "DT_INT4": 29,
        "DT_COMPLEX32": 33, "DT_HIFLOAT8": 34, "DT_FLOAT8_E5M2": 35, "DT_FLOAT8_E4M3FN": 36, "DT_FLOAT8_E8M0": 37,
    }  # fmt: skip


def test_unmapped_dtype_is_a_clear_error():
    """EX-7: a dtype GE has no type for is named in the error."""
    with pytest.raises(TypeError, match="float8_e4m3fnuz"):
        ge_ir.proto_dtype(torch.float8_e4m3fnuz)
    with pytest.raises(TypeError, match="float8_e4m3fnuz"):
        ge_ir.cpp_dtype(torch.float8_e4m3fnuz)


@pytest.mark.parametrize("dtype, numel, nbytes", [("DT_FLOAT", 6, 24), ("DT_BF16", 3, 6), ("DT_INT4", 3, 2),
                                                  ("DT_COMPLEX128", 2, 32), ("DT_STRING", 2, None)])  # fmt: skip
def test_dtype_nbytes(dtype, numel, nbytes):
    """EX-7: size of packed elements by GE dtype name (None where the width is not fixed)."""
    assert ge_ir.dtype_nbytes(dtype, numel) == nbytes
