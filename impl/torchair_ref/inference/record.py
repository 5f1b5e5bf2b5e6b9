"""The payload of a `compiled_module` file as a typed record, and the checks of what it was written for (CC-14).

`CacheRecord` is what `artifact` stores as JSON; `SCHEMA_VERSION` changes whenever its meaning does, and a record of
another schema is stale. Besides Dynamo's bytecode and the compiled graph it names what it was written for: the
cached function (module, qualified name, digest of its bytecode), the `<model_info>` folder, the root module's
train/eval flag, and every piece of code Dynamo traced for the graph (`TracedSource`: the lines of each inlined
function, method and submodule `forward`, from Dynamo's own list of traced code). A warm start compares them with
the live process by reading those lines again: no Dynamo import. Code inside torch itself is not listed: the
fingerprint's torch version and git revision cover it.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import types
from dataclasses import dataclass, field
from typing import Any

import torch

SCHEMA_VERSION = 3
_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep


class RecordError(ValueError):
    """A payload that is not a record of this schema (the message names the field)."""


@dataclass(frozen=True)
class TracedSource:
    """The source lines of one code object Dynamo traced: `file`, lines `first`..`last`, their SHA-256."""

    qualname: str
    file: str
    first: int
    last: int
    sha256: str


@dataclass
class CacheRecord:
    """CC-11/CC-14: everything a warm start needs, and what it checks before trusting it."""

    name: str
    created: str
    environment: dict[str, Any]
    function: dict[str, str]
    model_info: str
    training: bool
    traced_sources: list[TracedSource]
    options: dict[str, Any]
    bytecode: dict[str, Any]
    globals: dict[str, dict[str, str]]
    inputs: list[dict[str, Any]]
    #: the checks translated from Dynamo's guards for the traced frame (`guard_spec`), CC-21
    guards: list[dict[str, Any]]
    graph: dict[str, Any]
    schema: int = SCHEMA_VERSION
    extra: dict[str, Any] = field(default_factory=dict)

    def to_payload(self) -> dict[str, Any]:
        payload = dataclasses.asdict(self)
        payload.update(payload.pop("extra"))
        return payload

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> "CacheRecord":
        schema = payload.get("schema")
        if schema != SCHEMA_VERSION:
            raise RecordError(f"record schema {schema!r}; this torchair_ref reads schema {SCHEMA_VERSION}")
        names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        missing = sorted(names - payload.keys())
        if missing:
            raise RecordError(f"record lacks {missing}")
        values = {name: payload[name] for name in names}
        try:
            values["traced_sources"] = [TracedSource(**entry) for entry in payload["traced_sources"]]
        except TypeError as exc:
            raise RecordError(f"record has a malformed traced_sources entry: {exc}") from exc
        return cls(**values, extra={k: v for k, v in payload.items() if k not in names})


def traced_sources(codes: list[types.CodeType]) -> list[TracedSource]:
    """CC-14: the source lines of each traced code object outside torch; raises OSError when one has no source."""
    found: dict[tuple[str, int, int], TracedSource] = {}
    for code in codes:
        path = os.path.abspath(code.co_filename)
        if path.startswith(_TORCH_DIR):
            continue
        qualname = getattr(code, "co_qualname", code.co_name)  # co_qualname: Python 3.11+
        lines = [line for _, _, line in code.co_lines() if line is not None]
        first, last = code.co_firstlineno, max(lines, default=code.co_firstlineno)
        if (path, first, last) not in found:
            digest = lines_digest(path, first, last)
            if digest is None:
                raise OSError(f"the source of {qualname} ({code.co_filename}) cannot be read")
            found[(path, first, last)] = TracedSource(qualname, path, first, last, digest)
    return sorted(found.values(), key=lambda s: (s.file, s.first))


def lines_digest(path: str, first: int, last: int) -> str | None:
    """SHA-256 of lines `first`..`last` (1-based, inclusive) of the file, or None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            lines = handle.read().splitlines(keepends=True)
    except OSError:
        return None
    if last > len(lines):
        return None
    return hashlib.sha256(b"".join(lines[first - 1:last])).hexdigest()


def changed_sources(sources: list[TracedSource]) -> list[str]:
    """CC-14: the traced code whose lines differ now (edited, moved, or gone), each as `qualname (file:first)`."""
    return [f"{s.qualname} ({s.file}:{s.first})" for s in sources if lines_digest(s.file, s.first, s.last) != s.sha256]
