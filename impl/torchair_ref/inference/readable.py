"""`readable_cache`: a cache file as text (SPEC RC-1..RC-3), every variant it keeps (CC-23)."""
from __future__ import annotations

import dis
import io
import os
import stat
from typing import Any

from torchair_ref import _files
from torchair_ref.errors import BrokenCacheError
from torchair_ref.inference import artifact, bytecode, variants

_RULE = "=" * 100


def readable_cache(cache_bin: str | os.PathLike[str], print_output: bool = True,
                   file: str | os.PathLike[str] | None = None) -> str:
    """RC-1..RC-3: the readable text of `cache_bin`; printed when `print_output`, written as Python to `file`."""
    cache_bin = _path_argument("cache_bin", cache_bin)
    if not isinstance(print_output, bool):
        raise TypeError(f"print_output must be True or False, got {print_output!r}")
    out = None if file is None else _path_argument("file", file)
    if not os.path.lexists(cache_bin):
        raise ValueError(f"Cache file {cache_bin} is not exists")
    if os.path.islink(cache_bin):
        raise ValueError(f"Cache file {cache_bin} can not be a symlink")
    if out is not None:
        _check_output(out)
    payload = artifact.read(cache_bin)
    try:
        listed = variants.split(payload)
        if len(listed) == 1:
            text, code = render(listed[0]), graph_code(listed[0]["graph"])
        else:  # CC-23: every variant, with the guards that choose it
            text = "\n".join(_variant_header(i, len(listed), v) + "\n" + render(v) for i, v in enumerate(listed, 1))
            code = "\n".join(f"# variant {i}\n{graph_code(v['graph']).rstrip()}" for i, v in enumerate(listed, 1))
    except Exception as exc:  # noqa: BLE001 - any inconsistency of a checksummed payload (CC-17)
        raise BrokenCacheError(
            f"cache file {cache_bin} passes its checksum but does not hold a torchair_ref cache payload "
            f"({type(exc).__name__}: {exc})"
        ) from exc
    if print_output:
        print(text)
    if out is not None:
        _write_python(out, text, code)
    return text


def _path_argument(name: str, value: Any) -> str:
    """A str or os.PathLike[str] argument as a str; anything else is a TypeError/ValueError naming `name`."""
    path = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
    if not isinstance(path, str):
        raise TypeError(f"{name} must be a path (str or os.PathLike[str]), got {type(value).__name__} {value!r}")
    if "\0" in path:
        raise ValueError(f"{name} {path!r} contains a NUL character")
    return path


def render(payload: dict[str, Any]) -> str:
    """RC-2: metadata, the compiled graph's signature, and the disassembly of the cached caller frame."""
    graph = payload["graph"]
    lines = [
        _RULE,
        f"name: {payload['name']}",
        f"date: {payload['created']}",
        f"format version: {artifact.FORMAT_VERSION}",
        "environment: " + ", ".join(f"{k}={v}" for k, v in sorted(payload["environment"].items())),
        _RULE,
        f"compiled graph: {graph['compiler']} graph module"
        + (" replayed from a CUDA graph" if graph.get("cudagraphs") else ""),
        "inputs:",
    ]
    for i, meta in enumerate(payload["inputs"]):
        if meta["kind"] == "tensor":
            shape = ", ".join("?" if d is None else str(d) for d in meta["shape"])
            lines.append(f"  {i}: {meta['role']} {meta['source']}: {meta['dtype']}[{shape}] on {meta['device']}")
        else:
            lines.append(f"  {i}: {meta['role']} {meta['source']}: {meta['kind']}")
    lines.append("compile options:")
    lines.extend(f"  {key}: {value}" for key, value in sorted(payload["options"].items()))
    lines += [_RULE, "caller frame (Dynamo's bytecode for the cached method):"]
    out = io.StringIO()
    dis.dis(bytecode.decode(payload["bytecode"]), file=out)
    lines.append(out.getvalue().rstrip("\n"))
    lines.append(_RULE)
    return "\n".join(lines)


def _variant_header(index: int, count: int, variant: dict[str, Any]) -> str:
    """CC-23: which variant follows and its guards (Dynamo's guard kind and text, as translated)."""
    guards = [f"  {spec['guard']} ({spec['when']}): {spec.get('state') or spec['text']}" for spec in variant["guards"]]
    stored = variant.get("guard_code")
    if isinstance(stored, dict):  # CC-14: executable content of the file, named for whoever audits it
        guards.append(f"  (their per-call check is stored compiled: source sha256 {stored.get('sha256')})")
    return "\n".join([f"variant {index} of {count}, used when every guard below holds:", *guards])


def graph_code(record: dict[str, Any]) -> str:
    """The compiled graph's generated Python code."""
    return record.get("code") or record.get("source") or ""


def _check_output(path: str) -> None:
    """RC-3: refuse, before anything is read or written, an output file that is a symlink, a directory, not privately
    ours, or below something that is not a directory."""
    if os.path.islink(path):
        raise ValueError(f"Output file {path} can not be a symlink")
    if os.path.isdir(path):
        raise IsADirectoryError(f"file {path!r} is a directory; pass the path of a file to write the readable cache to")
    if os.path.lexists(path):
        info = os.stat(path)
        if info.st_uid != os.geteuid() or stat.S_IMODE(info.st_mode) != 0o600:
            raise ValueError(
                f"Output file {path} must be owned by the current user with mode 0600 "
                f"(it is uid {info.st_uid}, mode {stat.S_IMODE(info.st_mode):04o}); remove it or chmod 600 it"
            )
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.lexists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise NotADirectoryError(f"file {path!r} cannot be created: {parent} is not a directory")


def _write_python(path: str, text: str, code: str) -> None:
    """RC-3: `# ` comments then the graph code, mode 0600 (the path was checked by `_check_output`)."""
    commented = "\n".join(("# " + line).rstrip() for line in text.splitlines())
    data = (commented + "\n\n" + code.rstrip("\n") + "\n").encode("utf-8")
    _files.atomic_write(os.path.abspath(path), data, mode=0o600)
