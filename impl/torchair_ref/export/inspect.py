"""``python -m torchair_ref.export.inspect FILE.air [--json] [--run INPUTS.npz [--compare EXPECTED.npz]]``: what an
``.air`` file holds (ours or upstream's), and with ``--run`` what it computes (``run_graph``, EX-11).

Prints the main graph's op counts by type, its inputs (``Data`` ops: index, dtype, shape), the dtypes of all op
outputs, and its weights: inline ``Const`` ops and external ``FileConstant`` ops. Each ``FileConstant``'s file is
checked: it must exist and hold ``prod(shape) * itemsize`` bytes. A relative ``file_path`` is taken relative to the
directory of the ``.air`` file (an absolute one, as ``dynamo_export`` writes, is used as is).

Exit status: 0 when the file reads and every weight file checks out, 1 when a weight file is missing or has the
wrong size, 2 when the file cannot be read as a GE IR ``ModelDef`` or is malformed (the message says why): not a
regular file, over protobuf's 2 GiB, not a protobuf, no graph, a weight with no shape or dtype, a shape of more
than 64 dims, a negative weight dim, or a weight of more than 2**63 - 1 elements. Hostile files are read in time
linear in their size.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from google.protobuf.message import DecodeError

from ge_executor import ge_ir

from ..errors import TorchairRefError

#: protobuf's limit on one message
MAX_AIR_BYTES = 2**31 - 1
#: the most dims a shape may have (GE's limit is far lower; this bounds the work a hostile file can ask for)
MAX_DIMS = 64
#: the most elements a weight may have (int64)
MAX_ELEMENTS = 2**63 - 1


class NotAnAirFile(TorchairRefError, ValueError):
    """The file is not a readable GE IR ModelDef."""


@dataclass
class WeightInfo:
    name: str
    kind: str  # "Const" or "FileConstant"
    dtype: str
    shape: list[int]
    nbytes: int | None  # expected size: prod(shape) * itemsize (None if the dtype has no fixed width)
    file_path: str | None = None  # FileConstant: the path as resolved
    file_size: int | None = None  # FileConstant: the size on disk, None if missing
    ok: bool = True


@dataclass
class Summary:
    path: str
    model_name: str
    graphs: int
    ops: int
    op_counts: dict[str, int]
    inputs: list[dict[str, Any]]
    dtypes: dict[str, int]
    weights: list[WeightInfo] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(w.ok for w in self.weights)


def _dtype_name(name: str | None, value: int) -> str:
    return name or f"DT_<{value}>"


def _desc_dtype_name(value: int) -> str:
    """A ``TensorDescriptor.dtype`` by name (protobuf numbering, GE_IR.md)."""
    return _dtype_name(ge_ir.proto_dtype_name(value), value)


def read_model(path: str) -> Any:
    """Parse ``path`` as a ModelDef; NotAnAirFile when it cannot be read or holds no graph."""
    try:
        # O_NONBLOCK: a FIFO is refused below instead of waited on.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise NotAnAirFile(f"cannot read {path}: {e.strerror or e}") from e
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise NotAnAirFile(f"cannot read {path}: not a regular file")
    with os.fdopen(fd, "rb") as f:
        if info.st_size > MAX_AIR_BYTES:
            raise NotAnAirFile(
                f"{path} has {info.st_size} bytes, more than a protobuf message can hold ({MAX_AIR_BYTES})"
            )
        try:
            data = f.read(MAX_AIR_BYTES + 1)
        except OSError as e:
            raise NotAnAirFile(f"cannot read {path}: {e.strerror or e}") from e
    model = ge_ir.ModelDef()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as e:
        raise NotAnAirFile(f"{path} is not a GE IR ModelDef protobuf ({len(data)} bytes): {e}") from e
    if not model.graph:
        raise NotAnAirFile(f"{path} holds no graph ({len(data)} bytes): not an .air file")
    return model


def _shape(op: Any, dims: Any, what: str) -> list[int]:
    """The dims of ``op`` as a list, refused (NotAnAirFile) past ``MAX_DIMS`` before anything else is done with them."""
    if len(dims) > MAX_DIMS:
        raise NotAnAirFile(f"op {op.name!r} ({op.type}) has a {what} of {len(dims)} dims; GE allows at most {MAX_DIMS}")
    return list(dims)


def _numel(op: Any, shape: list[int]) -> int:
    """The element count of a weight's shape; NotAnAirFile for a negative dim or a count past int64."""
    numel = 1
    for dim in shape:
        if dim < 0:
            raise NotAnAirFile(f"weight {op.name!r} ({op.type}) has a negative dim in its shape {shape}")
        numel *= dim
        if numel > MAX_ELEMENTS:
            raise NotAnAirFile(f"weight {op.name!r} ({op.type}) has more than {MAX_ELEMENTS} elements (shape {shape})")
    return numel


def _weight(op: Any, air_dir: str) -> WeightInfo:
    if op.type == "Const":
        desc = op.attr["value"].t.desc if "value" in op.attr else (op.output_desc[0] if op.output_desc else None)
        dtype, shape = (desc.dtype, _shape(op, desc.shape.dim, "shape")) if desc is not None else (0, [])
        data_len = len(op.attr["value"].t.data) if "value" in op.attr else 0
        name = ge_ir.proto_dtype_name(dtype)
        expected = ge_ir.dtype_nbytes(name, _numel(op, shape))
        return WeightInfo(op.name, "Const", _dtype_name(name, dtype), shape, expected, ok=expected in (None, data_len))
    if not op.output_desc and not ("shape" in op.attr and "dtype" in op.attr):
        raise NotAnAirFile(f"FileConstant {op.name!r} has neither shape and dtype attrs nor an output description")
    dims = op.attr["shape"].list.i if "shape" in op.attr else op.output_desc[0].shape.dim
    shape = _shape(op, dims, "shape")
    # The dtype attr is a dt attr (GE's C++ numbering); the output desc uses the protobuf enum (GE_IR.md).
    if "dtype" in op.attr:
        dtype = op.attr["dtype"].dt
        name = ge_ir.cpp_dtype_name(dtype)
    else:
        dtype = op.output_desc[0].dtype
        name = ge_ir.proto_dtype_name(dtype)
    raw = op.attr["file_path"].s.decode("utf-8", "replace") if "file_path" in op.attr else ""
    path = raw if os.path.isabs(raw) else os.path.join(air_dir, raw)
    expected = ge_ir.dtype_nbytes(name, _numel(op, shape))
    size = os.path.getsize(path) if raw and os.path.isfile(path) else None
    ok = size is not None and expected in (None, size)
    return WeightInfo(op.name, "FileConstant", _dtype_name(name, dtype), shape, expected, path, size, ok)


def summarize(path: str) -> Summary:
    """Summarise the main graph (``graph[0]``) of an ``.air`` file."""
    model = read_model(path)
    graph = model.graph[0]
    air_dir = os.path.dirname(os.path.abspath(path))
    inputs = []
    for op in graph.op:
        if op.type == "Data":
            desc = op.output_desc[0] if op.output_desc else ge_ir.TensorDescriptor()
            index = op.attr["index"].i if "index" in op.attr else None
            inputs.append({"name": op.name, "index": index, "dtype": _desc_dtype_name(desc.dtype),
                           "shape": _shape(op, desc.shape.dim, "shape")})
    dtypes = Counter(_desc_dtype_name(d.dtype) for op in graph.op for d in op.output_desc)
    return Summary(
        path=path,
        model_name=model.name,
        graphs=len(model.graph),
        ops=len(graph.op),
        op_counts=dict(Counter(op.type for op in graph.op).most_common()),
        inputs=inputs,
        dtypes=dict(dtypes.most_common()),
        weights=[_weight(op, air_dir) for op in graph.op if op.type in ("Const", "FileConstant")],
    )


def _describe_file(w: WeightInfo) -> str:
    if w.file_size is None:
        return f"{w.file_path}  MISSING"
    verdict = "ok" if w.ok else f"WRONG SIZE, expected {w.nbytes}"
    return f"{w.file_path}  {w.file_size} bytes, {verdict}"


def render_text(s: Summary) -> str:
    """The human-readable report."""
    lines = [f"{s.path}: model {s.model_name!r}, {s.graphs} graph(s); main graph has {s.ops} ops", "op counts:"]
    lines += [f"  {count:6d}  {op_type}" for op_type, count in s.op_counts.items()]
    lines.append(f"inputs ({len(s.inputs)} Data):")
    lines += [f"  [{i['index']}] {i['name']}  {i['dtype']} {i['shape']}" for i in s.inputs]
    lines.append("output dtypes:")
    lines += [f"  {count:6d}  {dtype}" for dtype, count in s.dtypes.items()]
    inline = [w for w in s.weights if w.kind == "Const"]
    external = [w for w in s.weights if w.kind == "FileConstant"]
    inline_bytes = sum(w.nbytes or 0 for w in inline)
    lines.append(
        f"constants: {len(inline)} inline (Const, {inline_bytes} bytes), {len(external)} external (FileConstant)"
    )
    for w in external:
        lines.append(f"  {w.name}  {w.dtype} {w.shape}  {_describe_file(w)}")
    lines += [f"  {w.name}  Const data does not match {w.dtype} {w.shape}" for w in inline if not w.ok]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m torchair_ref.export.inspect", description=__doc__.splitlines()[0])
    parser.add_argument("air", help="the .air file")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--run", metavar="INPUTS.npz", help="run the graph on CPU on these inputs, print its outputs")
    parser.add_argument("--compare", metavar="EXPECTED.npz", help="with --run: print the max difference from these")
    options = parser.parse_args(argv)
    if options.compare and not options.run:
        parser.error("--compare needs --run INPUTS.npz")
    try:
        summary = summarize(options.air)
        ran = _run(options) if options.run else None
    except NotAnAirFile as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except (ArithmeticError, LookupError, TypeError, ValueError, RecursionError) as e:  # a malformed file, whatever
        print(f"error: {options.air} is a malformed GE IR ModelDef ({type(e).__name__}: {e})", file=sys.stderr)
        return 2
    if options.json:
        print(json.dumps({**asdict(summary), "ok": summary.ok, **({"run": ran} if ran is not None else {})}, indent=2))
    else:
        print(render_text(summary) + (f"\n{ran}" if ran is not None else ""))
    return 0 if summary.ok else 1


def _run(options: argparse.Namespace) -> str:
    """``--run``: the graph's outputs (and differences) as text; NotAnAirFile for anything refused or failing."""
    from . import run_graph  # imports torch and the executor: only when asked to run

    try:
        return run_graph.run(read_model(options.air), options.air, options.run, options.compare)
    except run_graph.RunRefused as e:
        raise NotAnAirFile(f"--run: {e}") from e


if __name__ == "__main__":
    sys.exit(main())
