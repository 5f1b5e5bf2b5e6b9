"""Reading what ``dynamo_export`` wrote (SPEC section 4): the files of an export, the ``.air`` graph through the
suite's own GE IR reader, the ``dynamo.pbtxt`` dump, weight bytes and the ATC configs the suite expects.

Nothing here imports the implementation under test: an export is judged by its files alone.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from torchair_conformance import ge_ir, models

__all__ = [
    "PBTXT",
    "OPTIONS_JSON",
    "OPTIONS_JSON_SHAPE",
    "REAL_THRESHOLD",
    "files_under",
    "air_name",
    "load_air",
    "op_counts",
    "ops_of",
    "PbtxtNode",
    "parse_pbtxt",
    "tensor_view",
    "same_bytes_as_file",
    "attr_int_list",
    "resolve_file_path",
    "is_all_reduce",
    "model_relation_config",
    "numa_config",
    "tensor_bytes",
    "expected_data",
    "weight_sizes",
]

PBTXT = "dynamo.pbtxt"
# EX-3/EX-4: the GE options file beside dynamo.pbtxt, and its two levels of keys.
OPTIONS_JSON = "options.json"
OPTIONS_JSON_SHAPE = {"compile options": ("global", "session", "graph"),
                      "execute options": ("global", "session", "graph")}
# EX-6: (2048 - 200) MiB.
REAL_THRESHOLD = 1_937_768_448
_CHUNK = 1 << 26


def files_under(root: os.PathLike | str) -> set[str]:
    """Every file (and symlink) under ``root`` as a ``/``-separated path relative to it; empty if ``root`` is
    missing."""
    found: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        links = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        for name in filenames + links:
            found.add(name if rel == "." else f"{Path(rel).as_posix()}/{name}")
    return found


def air_name(export_name: str, rank: int | None = None) -> str:
    """EX-1/EX-3/EX-4: the ``.air`` file's name: the last path component of ``export_name`` (plus the rank)."""
    name = os.path.basename(os.path.normpath(export_name))
    return f"{name}.air" if rank is None else f"{name}{rank}.air"


def load_air(path: os.PathLike | str) -> Any:
    """EX-7: the ``ModelDef`` in an ``.air`` file (an AssertionError naming the file when it does not parse)."""
    data = Path(path).read_bytes()
    try:
        return ge_ir.parse_model(data)
    except Exception as exc:  # DecodeError, or protobuf's RuntimeWarning-turned-error on a wire-type mismatch
        raise AssertionError(f"EX-7: {path} ({len(data)} bytes) does not parse as a GE IR ModelDef: {exc!r}") from exc


def op_counts(graph: Any) -> Counter:
    """Ops of ``graph`` by type."""
    return Counter(op.type for op in graph.op)


def ops_of(graph: Any, op_type: str) -> list[Any]:
    return list(ge_ir.ops_by_type(graph, op_type))


def attr_int_list(attr: Any) -> list[int]:
    return list(attr.list.i)


def expected_data(spec: Mapping[str, Any], batch: Sequence[int], dynamic: bool) -> list[tuple[int, list[int]]]:
    """EX-7/EX-9: (dtype, dims) of the ``Data`` op of each input of an export model: its leading (batch) dims are
    ``-1`` when ``dynamic``; the feature dim is fixed by the first linear layer either way."""
    dtype = ge_ir.proto_dtype(models.DTYPES[spec["dtype"]])
    lead = [-1] * len(batch) if dynamic else list(batch)
    return [(dtype, lead + [s["features"]]) for s in spec["inputs"]]


def weight_sizes(weights: Mapping[str, Sequence[Any]]) -> list[int]:
    """EX-6: ``numel * element_size`` of each distinct weight (``export_zoo.model_weights``)."""
    return [entry[0].numel() * entry[0].element_size() for entry in weights.values()]


# --- dynamo.pbtxt -----------------------------------------------------------------------------------------------

# A quoted string: "..." or '...' (upstream writes attr values as single-quoted text that holds braces and quotes).
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_FIELD = re.compile(r'^\s*(name|op|input)\s*:\s*("(?:[^"\\]|\\.)*")\s*$')


@dataclass
class PbtxtNode:
    """One top-level ``node { ... }`` block of a ``dynamo.pbtxt``: its direct fields and its whole text."""

    name: str | None = None
    op: str | None = None
    inputs: list[str] = field(default_factory=list)
    text: str = ""


def _unquote(token: str) -> str:
    return bytes(token[1:-1], "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")


def parse_pbtxt(text: str) -> list[PbtxtNode]:
    """EX-8: the ``node`` blocks of a text dump, read by brace depth (quoted strings and ``#`` comments skipped)."""
    nodes: list[PbtxtNode] = []
    depth = 0
    current: PbtxtNode | None = None
    lines: list[str] = []
    for line in text.splitlines():
        bare = _STRING.sub('""', line).split("#", 1)[0]
        if depth == 0 and re.match(r"^\s*node\s*\{\s*$", bare):
            current, lines = PbtxtNode(), []
        elif current is not None and depth == 1:
            match = _FIELD.match(line)
            if match:
                value = _unquote(match.group(2))
                if match.group(1) == "input":
                    current.inputs.append(value)
                else:
                    setattr(current, match.group(1), value)
        depth += bare.count("{") - bare.count("}")
        if current is not None:
            lines.append(line)
            if depth == 0:
                current.text = "\n".join(lines)
                nodes.append(current)
                current = None
    if depth != 0:
        raise AssertionError(f"EX-8: dynamo.pbtxt has unbalanced braces (depth {depth} at the end)")
    return nodes


# --- weight bytes -----------------------------------------------------------------------------------------------


@contextlib.contextmanager
def tensor_view(t: torch.Tensor) -> Iterator[memoryview]:
    """The raw bytes of a contiguous CPU tensor (C order, native byte order), without a copy."""
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    if not t.is_contiguous():
        t = t.contiguous()
    n = t.numel() * t.element_size()
    yield memoryview((ctypes.c_ubyte * n).from_address(t.data_ptr())).cast("B") if n else memoryview(b"")


def tensor_bytes(t: torch.Tensor) -> bytes:
    with tensor_view(t) as view:
        return bytes(view)


def same_bytes_as_file(t: torch.Tensor, path: os.PathLike | str) -> int | None:
    """None when the file holds exactly ``t``'s raw bytes, else the first byte offset where they differ."""
    with tensor_view(t) as view, open(path, "rb") as f:
        offset = 0
        while True:
            chunk = f.read(_CHUNK)
            want = view[offset:offset + _CHUNK]
            if chunk != want:
                for i, (a, b) in enumerate(zip(chunk, want)):
                    if a != b:
                        return offset + i
                return offset + min(len(chunk), len(want))
            if not chunk:
                return None
            offset += len(chunk)


def resolve_file_path(file_path: bytes | str, cwd: os.PathLike | str) -> str:
    """A ``FileConstant``'s ``file_path`` as a real path (a relative one taken against ``cwd``)."""
    text = file_path.decode() if isinstance(file_path, bytes) else file_path
    return os.path.realpath(os.path.join(cwd, text))


def is_all_reduce(op_type: str) -> bool:
    """EX-4: whether an op type is an all-reduce (ATen ``_c10d_functional.all_reduce`` or GE ``HcomAllReduce``)."""
    return "allreduce" in op_type.lower().replace("_", "")


# --- ATC configs (EX-5) -----------------------------------------------------------------------------------------


def model_relation_config(export_name: str, world_size: int, groups: Mapping[str, Sequence[int]]) -> dict[str, Any]:
    """EX-5: ``model_relation_config.json`` as SPEC lays it out, keys in order."""
    name = os.path.basename(os.path.normpath(export_name))
    return {
        "deploy_config": [{"submodel_name": f"{name}{r}.air", "deploy_device_id_list": f"0:0:{r}"}
                          for r in range(world_size)],
        "model_name_to_instance_id": [{"submodel_name": f"{name}{r}.air", "model_instance_id": r}
                                      for r in range(world_size)],
        "comm_group": [{"group_name": g, "group_rank_list": str(list(ranks))} for g, ranks in groups.items()],
        "rank_table": [{"rank_id": r, "model_instance_id": r} for r in range(world_size)],
    }


def numa_config(world_size: int) -> dict[str, Any]:
    """EX-5: ``numa_config.json`` as SPEC lays it out (``nodes_toplogy`` spelled as upstream spells it)."""
    return {
        "cluster": [{
            "cluster_nodes": [{"node_id": 0, "node_type": "ATLAS800", "ipaddr": "127.0.0.1", "port": 29500,
                               "item_list": [{"item_id": r} for r in range(world_size)]}],
            "nodes_toplogy": {},
        }],
        "item_def": [{"item_type": "Ascend910"}],
        "node_def": [{"item": [{"item_type": "Ascend910"}]}],
    }  # fmt: skip

