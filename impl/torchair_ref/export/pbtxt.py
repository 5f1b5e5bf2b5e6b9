"""Attr values and the ``dynamo.pbtxt`` text dump of a GE graph (EX-8, EX-9)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import torch
from google.protobuf import text_format
from google.protobuf.text_encoding import CEscape

from ge_executor import ge_ir

# (element test, ListValue field, ListValueType name), first match wins
_LIST_KINDS: tuple[tuple[Callable[[Any], bool], str, str], ...] = (
    (lambda v: isinstance(v, bool), "b", "VT_LIST_BOOL"),
    (lambda v: isinstance(v, int) and not isinstance(v, bool), "i", "VT_LIST_INT"),
    (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "f", "VT_LIST_FLOAT"),
    (lambda v: isinstance(v, str), "s", "VT_LIST_STRING"),
    (lambda v: isinstance(v, torch.dtype), "dt", "VT_LIST_DATA_TYPE"),
)
_EMPTY_LIST_KINDS = {"int": "VT_LIST_INT", "SymInt": "VT_LIST_INT", "float": "VT_LIST_FLOAT", "bool": "VT_LIST_BOOL",
                     "str": "VT_LIST_STRING"}  # fmt: skip


def set_attr(attr: Any, value: Any, schema_type: str = "") -> bool:
    """Store a non-tensor argument in an AttrDef; False (nothing stored) for None."""
    if value is None:
        return False
    if isinstance(value, bool):
        attr.b = value
    elif isinstance(value, int):
        attr.i = value
    elif isinstance(value, float):
        attr.f = value
    elif isinstance(value, str):
        attr.s = value.encode()
    elif isinstance(value, torch.dtype):
        attr.dt = ge_ir.cpp_dtype(value)
    elif isinstance(value, (list, tuple)):
        lst = attr.list
        if not value:
            element = re.sub(r"[\[\]?]|List|Optional", "", schema_type)
            lst.val_type = ge_ir.ListValueType.Value(_EMPTY_LIST_KINDS.get(element, "VT_LIST_NONE"))
            return True
        for test, fname, kind in _LIST_KINDS:
            if all(test(v) for v in value):
                values: Sequence[Any] = [ge_ir.cpp_dtype(v) for v in value] if fname == "dt" else value
                values = [v.encode() for v in values] if fname == "s" else values
                getattr(lst, fname).extend(values)
                lst.val_type = ge_ir.ListValueType.Value(kind)
                return True
        attr.ClearField("list")
        attr.s = repr(value).encode()
    else:  # device, layout, memory_format, complex, ...: their text
        attr.s = str(value).encode()
    return True


def module_stack_text(stack: dict[str, tuple[str, Any]]) -> str:
    """EX-9: one line per enclosing module, outermost first: ``<fqn>: <module type>``; the root's line is its type."""
    lines = []
    for path, module_type in stack.values():
        fqn = re.sub(r"^L\['\w+'\]\.?", "", path)
        if isinstance(module_type, type):
            module_type = f"{module_type.__module__}.{module_type.__qualname__}"
        lines.append(f"{fqn}: {module_type}" if fqn else str(module_type))
    return "\n".join(lines)


def _quote(text: str) -> str:
    # CEscape takes str as well as bytes (protobuf's text_encoding.py); its stub names bytes only
    return '"' + CEscape(text, as_utf8=True) + '"'  # type: ignore[arg-type]


def _message_lines(message: Any, indent: int) -> list[str]:
    return text_format.MessageToString(message, as_utf8=True, indent=indent).splitlines()


def _attr_lines(attr: Any, indent: int) -> list[str]:
    pad = " " * indent
    kind = attr.WhichOneof("value")
    if kind == "dt":
        return [f"{pad}dt: {_dtype_name(attr.dt)}"]
    if kind == "t":
        return [
            f"{pad}t {{",
            f"{pad}  desc {{",
            *_message_lines(attr.t.desc, indent + 4),
            f"{pad}  }}",
            f"{pad}  # data: {len(attr.t.data)} bytes, in the .air file",
            f"{pad}}}",
        ]
    if kind == "list" and attr.list.dt:
        rest = ge_ir.ListValue()
        rest.CopyFrom(attr.list)
        rest.ClearField("dt")
        dts = [f"{pad}  dt: {_dtype_name(v)}" for v in attr.list.dt]
        return [f"{pad}list {{", *dts, *_message_lines(rest, indent + 2), f"{pad}}}"]
    return _message_lines(attr, indent)


def _dtype_name(value: int) -> str:
    """A ``dt`` attr's type by name: ``dt`` attrs hold GE's C++ numbering, not the protobuf enum (GE_IR.md)."""
    return ge_ir.cpp_dtype_name(value) or str(value)


def to_pbtxt(graph: Any) -> str:
    """EX-8: the readable dump, one ``node { name op input attr output_desc }`` block per op.

    Dtypes appear by name (``dtype: DT_BF16`` in output descs, ``dt: DT_BF16`` in attrs, each read in its own
    numbering). Tensor data of ``Const`` ops is left out (a comment gives its size) so that the dump stays readable.
    """
    lines: list[str] = []
    for op in graph.op:
        lines += ["node {", f"  name: {_quote(op.name)}", f"  op: {_quote(op.type)}"]
        lines += [f"  input: {_quote(i)}" for i in op.input]
        for key in sorted(op.attr):
            value = _attr_lines(op.attr[key], 6)
            lines += ["  attr {", f"    key: {_quote(key)}", "    value {", *value, "    }", "  }"]
        for desc in op.output_desc:
            lines += ["  output_desc {", *_message_lines(desc, 4), "  }"]
        lines.append("}")
    return "\n".join(lines) + "\n"
