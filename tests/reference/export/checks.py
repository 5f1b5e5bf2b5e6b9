"""Readers and assertion helpers for exported files; every failure message carries the values that broke it."""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from typing import Any

import torch

import torchair_ref
from ge_executor import ge_ir
from torchair_ref.config import CompilerConfig


def config(*, atc: bool = False, module_stack: bool = False) -> CompilerConfig:
    """A CompilerConfig with the two export flags set."""
    c = CompilerConfig()
    c.export.experimental.auto_atc_config_generated = atc
    c.export.experimental.enable_record_nn_module_stack = module_stack
    return c


def child_env() -> dict[str, str]:
    """The environment for a child interpreter that must import this torchair_ref and the tests package, whatever
    the working directory (tests run in their tmp_path) and however PYTHONPATH was given (possibly relative)."""
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(torchair_ref.__file__)))
    tests_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if os.path.isabs(p)]
    return {**os.environ, "PYTHONPATH": os.pathsep.join([package_parent, tests_parent, *inherited])}


def load_air(path: str | os.PathLike) -> Any:
    """EX-7: the file parses as a ModelDef with a main graph."""
    model = ge_ir.ModelDef()
    with open(path, "rb") as f:
        model.ParseFromString(f.read())
    assert len(model.graph) >= 1, f"{path}: ModelDef has no graph"
    return model


def op_counts(graph: Any) -> Counter:
    return Counter(op.type for op in graph.op)


def ops_of(graph: Any, op_type: str) -> list[Any]:
    return [op for op in graph.op if op.type == op_type]


def weight_ops(graph: Any, op_type: str) -> list[Any]:
    """The ``Const``/``FileConstant`` ops that hold weights: named by fqn, unlike the ``Const``, ``Const_1``, ...
    operands the reference's lowerings add (a Transpose's perm, a Mul's alpha)."""
    return [op for op in ops_of(graph, op_type) if not re.fullmatch(r"Const(_\d+)?", op.name)]


def files_under(root: str | os.PathLike) -> set[str]:
    """Every file below ``root``, as paths relative to it."""
    found = set()
    for parent, _dirs, names in os.walk(root):
        found |= {os.path.relpath(os.path.join(parent, n), root) for n in names}
    return found


def storage_bytes(t: torch.Tensor) -> bytes:
    """A tensor's elements as raw bytes in C order, read through torch (independently of the exporter's path)."""
    flat = t.detach().contiguous().reshape(-1)
    return bytes(flat.view(torch.uint8).tolist())


def assert_ge_dtype(op: Any, t: torch.Tensor) -> None:
    found = op.output_desc[0].dtype
    expected = ge_ir.proto_dtype(t.dtype)
    assert found == expected, f"{op.name}: dtype {ge_ir.DataType.Name(found)}, expected {ge_ir.DataType.Name(expected)}"


def assert_const_holds(op: Any, t: torch.Tensor) -> None:
    """EX-6: an inline weight is a Const whose TensorDef has the weight's dtype, shape and raw bytes."""
    assert op.type == "Const", f"{op.name}: expected Const, found {op.type}"
    value = op.attr["value"].t
    shape = list(value.desc.shape.dim)
    assert shape == list(t.shape), f"{op.name}: shape {shape} != {list(t.shape)}"
    assert value.desc.layout == "ND", f"{op.name}: layout {value.desc.layout!r}"
    assert value.data == storage_bytes(t), f"{op.name}: Const data ({len(value.data)} bytes) differs from the weight"
    assert value.desc == op.output_desc[0], f"{op.name}: value desc {value.desc} != output_desc[0] {op.output_desc[0]}"
    assert_ge_dtype(op, t)


def assert_file_constant_holds(op: Any, t: torch.Tensor, weight_dir: str | os.PathLike, fqn: str) -> None:
    """EX-6/EX-7: a FileConstant's attrs name the weight's file in ``weight_dir``, which holds exactly its bytes."""
    assert op.type == "FileConstant", f"{op.name}: expected FileConstant, found {op.type}"
    for key in ("shape", "dtype", "file_path", "file_id"):
        assert key in op.attr, f"{op.name}: attr {key!r} missing, has {sorted(op.attr)}"
    shape = list(op.attr["shape"].list.i)
    assert shape == list(t.shape), f"{op.name}: shape attr {shape} != {list(t.shape)}"
    # A dt attr holds GE's C++ numbering (float32 = 0), not the protobuf enum of the output desc (GE_IR.md).
    found = op.attr["dtype"].dt
    assert found == ge_ir.cpp_dtype(t.dtype), (
        f"{op.name}: dtype attr {found} ({ge_ir.cpp_dtype_name(found)}), expected {ge_ir.cpp_dtype(t.dtype)} for "
        f"{t.dtype} in GE's C++ numbering")
    assert op.attr["file_id"].s == b"", f"{op.name}: file_id {op.attr['file_id'].s!r} should be empty"
    path = op.attr["file_path"].s.decode()
    expected_path = os.path.join(os.path.abspath(weight_dir), fqn.replace(".", "_"))
    assert path == expected_path, f"{op.name}: file_path {path!r}, expected {expected_path!r}"
    size = os.path.getsize(path)
    assert size == math.prod(shape) * t.element_size(), f"{path}: {size} bytes for {t.dtype} {shape}"
    with open(path, "rb") as f:
        data = f.read()
    assert data == storage_bytes(t), f"{path}: bytes differ from weight {fqn} ({t.dtype} {list(t.shape)})"
    assert_ge_dtype(op, t)


def assert_data_indexed(graph: Any) -> None:
    """EX-6: the Data ops are numbered 0..n-1 in op order."""
    indices = [op.attr["index"].i for op in ops_of(graph, "Data")]
    assert indices == list(range(len(indices))), f"Data indices {indices}, expected 0..{len(indices) - 1}"


def pbtxt_nodes(text: str) -> list[dict[str, Any]]:
    """Split a dynamo.pbtxt into its top-level ``node { ... }`` blocks: name, op, inputs and the raw block."""
    blocks = re.findall(r"^node \{\n(.*?)^\}\n", text, flags=re.S | re.M)
    nodes = []
    for block in blocks:
        name = re.search(r'^  name: "(.*)"$', block, flags=re.M)
        op = re.search(r'^  op: "(.*)"$', block, flags=re.M)
        assert name and op, f"pbtxt block without name/op:\n{block}"
        inputs = re.findall(r'^  input: "(.*)"$', block, flags=re.M)
        nodes.append({"name": name.group(1), "op": op.group(1), "inputs": inputs, "text": block})
    return nodes
