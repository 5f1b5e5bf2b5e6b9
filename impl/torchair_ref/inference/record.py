"""The payload of a `compiled_module` file as a typed record, and the checks of what it was written for (CC-14).

`CacheRecord` is what `artifact` stores as JSON; `SCHEMA_VERSION` changes whenever its meaning does, and a record of
another schema is stale. Besides Dynamo's bytecode and the compiled graph it names what it was written for: the
cached function (module, qualified name, digest of its bytecode), the `<model_info>` folder, the root module's
train/eval flag, and every piece of code Dynamo traced for the graph (`TracedSource`: the lines of each inlined
function, method and submodule `forward`, from Dynamo's own list of traced code). A warm start compares them with
the live process by hashing those lines' bytes again: no Dynamo import. Code inside torch itself is not listed: the
fingerprint's torch version and git revision cover it. Code Python generated for a dataclass or namedtuple has no
lines to read: it is listed by its class and fields instead (`generated`).
"""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import os
import stat
import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import torch

from torchair_ref.errors import BrokenCacheError, StaleCacheError, TorchairRefError
from torchair_ref.inference import (
    code_identity,
    file_states,
    generated,
    guard_bindings,
    guard_check,
    guard_kinds,
    tensor_spec,
)
from torchair_ref.inference.artifact import environment
from torchair_ref.inference.guard_kinds import GuardSpec, UnknownGuard
from torchair_ref.inference.guard_values import code_digest
from torchair_ref.inference.tensor_spec import GraphInput

#: 7: a class digest holds one digest of each base's own names and constants; 6: a guarded class identified by the
#: code of the methods the trace reached; 5: traced lines checked by their bytes; 4: digests from one `marshal` text
#: each
SCHEMA_VERSION = 7
_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep


class RecordError(TorchairRefError, ValueError):
    """A payload that is not a record of this schema (the message names the field)."""


@dataclass(frozen=True)
class TracedSource:
    """The source lines of one code object Dynamo traced: `file`, lines `first`..`last`, their SHA-256, and where
    they lie in the file (bytes `start`..`end`): a warm start hashes those bytes, without splitting the file into
    lines (0, 0 for code identified otherwise: `generated`, `code_identity`)."""

    qualname: str
    file: str
    first: int
    last: int
    sha256: str
    start: int = 0
    end: int = 0


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
    #: the compiled graph's inputs, each a tensor's spec or a scalar's kind (CC-15)
    inputs: list[GraphInput]
    #: the checks translated from Dynamo's guards for the traced frame (`guard_kinds`), CC-21
    guards: Sequence[GuardSpec]
    graph: dict[str, Any]
    schema: int = SCHEMA_VERSION
    extra: dict[str, Any] = field(default_factory=dict)

    def to_payload(self) -> dict[str, Any]:
        payload = dataclasses.asdict(dataclasses.replace(self, guards=[], inputs=[]))
        payload["guards"] = [spec.to_json() for spec in self.guards]
        payload["inputs"] = [graph_input.to_json() for graph_input in self.inputs]
        payload.update(payload.pop("extra"))
        return payload

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> CacheRecord:
        schema = payload.get("schema")
        if schema != SCHEMA_VERSION:
            raise RecordError(f"record schema {schema!r}; this torchair_ref reads schema {SCHEMA_VERSION}")
        names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        missing = sorted(names - payload.keys())
        if missing:
            raise RecordError(f"record lacks {missing}")
        values = {name: payload[name] for name in names}
        try:
            values["traced_sources"] = [_traced_source(entry) for entry in payload["traced_sources"]]
        except TypeError as exc:
            raise RecordError(f"record has a malformed traced_sources entry: {exc}") from exc
        if not isinstance(payload["guards"], list):
            raise BrokenCacheError(f"the recorded guards are a {type(payload['guards']).__name__}, not a list")
        # A record whose check was stored with its outline had every spec's sources read when it was written, and a
        # warm start whose check has that outline reads none of them: parsing them again here was a sixth of its
        # guard work. They are left to the check (a damaged one changes the outline, and writing the check then
        # reads it), but for the sources of the guards checked at load. Each spec's values are checked here, but for
        # the specs a replay table this code wrote rebuilds the constants of (`Guards`): those when first read.
        stored = payload.get("guard_code")
        stored = stored if isinstance(stored, dict) else {}
        sources = not isinstance(stored.get("outline"), str)
        replay = None if sources else _replay(stored.get("replay"), payload["guards"])
        first = stored.get("first")
        first = _replay(first.get("replay"), payload["guards"]) if isinstance(first, dict) else None
        values["guards"] = Guards(payload["guards"], sources, replay, first)
        values["inputs"] = tensor_spec.graph_inputs(payload["inputs"])
        return cls(**values, extra={k: v for k, v in payload.items() if k not in names})


def _traced_source(entry: Any) -> TracedSource:
    """`TracedSource(**entry)` (TypeError for an entry that is not its fields), made without the frozen dataclass's
    `__init__` where the entry has every field, as `to_payload` writes it (GPT-2's record lists 67)."""
    if type(entry) is not dict or entry.keys() != _TRACED_FIELDS:
        return TracedSource(**entry)
    source = object.__new__(TracedSource)
    source.__dict__.update(entry)
    return source


_TRACED_FIELDS = {f.name for f in dataclasses.fields(TracedSource)}


class Guards(Sequence[GuardSpec]):
    """CC-17/CC-21: a record's guard specs, read into typed ones (`guard_kinds.from_json`) when the record loads, a
    spec that is not valid raising `BrokenCacheError` then; but for the specs its stored check's replay table
    (`replay`, written by this very code: `_replay`) or its load-time check's (`first`) rebuilds the constants of
    (`guard_bindings`), each read when first asked for: only when a check fails, by the slow path that names it. The
    file's seal covers the specs and the tables together; a spec edited and resealed is found only there."""

    def __init__(self, raw: list[Any], sources: bool, replay: dict[str, Any] | None = None,
                 first: dict[str, Any] | None = None) -> None:
        self._raw, self._sources, self.replay, self.first = raw, sources, replay, first
        self._typed: list[GuardSpec | None] = [None] * len(raw)
        self._call: set[int] | None = None
        later: set[int] = set()
        if replay is not None:
            self._call = set(replay["call"])
            later = self._call - {replay["call"][k] for k, _ in replay["rerun"]}
        if first is not None:
            later |= set(first["call"]) - {first["call"][k] for k, _ in first["rerun"]}
        for index in range(len(raw)):
            if index not in later:
                self[index]  # noqa: B018 - read now, so that an invalid spec makes the file broken when it loads

    def __len__(self) -> int:
        return len(self._raw)

    @overload
    def __getitem__(self, index: int) -> GuardSpec: ...

    @overload
    def __getitem__(self, index: slice) -> list[GuardSpec]: ...

    def __getitem__(self, index: int | slice) -> GuardSpec | list[GuardSpec]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self._raw))[index]]
        spec = self._typed[index]
        if spec is None:
            try:  # with a stored outline, a per-call spec's sources are read only where its check is written
                spec = guard_kinds.from_json(self._raw[index], self._sources)
                if not self._sources and not spec.per_call():
                    spec.validate()
            except (UnknownGuard, TypeError, ValueError) as exc:
                raise BrokenCacheError(f"the recorded guards are not valid: {exc}") from exc
            self._typed[index] = spec
        return spec

    def load_only(self) -> list[GuardSpec]:
        """The specs checked where the file loads, not on every call (`GuardSpec.per_call`)."""
        indices = range(len(self._raw)) if self._call is None else (i for i in range(len(self)) if i not in self._call)
        return [spec for spec in map(self.__getitem__, indices) if not spec.per_call()]


def _replay(table: Any, raw: list[Any]) -> dict[str, Any] | None:
    """A stored check's replay table, where this very code wrote it for these specs (else None: every spec is read
    when the file loads, and the check is written from them)."""
    replay = guard_bindings.check(table)
    if replay is None or replay["writer"] != guard_check.writer_digests():
        return None
    return replay if max(replay["call"], default=-1) < len(raw) else None


def checked(payload: dict[str, Any], method: types.MethodType, model_info: str) -> CacheRecord:
    """CC-14/CC-17: the payload as a record written for this method, `<model_info>` folder, environment, train/eval
    mode and code, else `StaleCacheError` saying what differs."""
    try:
        loaded = CacheRecord.from_payload(payload)
    except RecordError as exc:
        raise StaleCacheError(str(exc)) from exc
    recorded = loaded.environment
    current = environment(recorded.get("device", "cpu"))
    if recorded != current:
        changed = {k: (recorded.get(k), current.get(k)) for k in current if recorded.get(k) != current.get(k)}
        raise StaleCacheError(f"written under another environment (cached, now): {changed}")
    function = method.__func__
    written_for = (loaded.function.get("module"), loaded.function.get("qualname"), loaded.model_info)
    # The live <model_info> as the path formula made it (a <dist> level may stand between it and <func>).
    live = (function.__module__, function.__qualname__, model_info)
    if written_for != live:
        raise StaleCacheError(
            f"written for {written_for[0]}.{written_for[1]} in folder {written_for[2]!r}, not for "
            f"{live[0]}.{live[1]} in {live[2]!r} (a file copied from another model?)"
        )
    if loaded.function.get("code_digest") != code_digest(function.__code__):
        raise StaleCacheError(f"the code of {function.__qualname__} changed since the cache was written")
    changed_code = changed_sources(loaded.traced_sources, loaded.extra.get("source_states"))
    if changed_code:
        raise StaleCacheError(f"traced code changed since the cache was written: {', '.join(changed_code)}")
    training = bool(getattr(method.__self__, "training"))  # noqa: B009 - a Module's flag; __self__ is `object`
    if loaded.training != training:
        mode = {True: "train", False: "eval"}
        raise StaleCacheError(
            f"written with the module in {mode[loaded.training]} mode, called in {mode[training]} mode"
        )
    return loaded


def traced_sources(codes: list[types.CodeType], states: dict[str, list[int]] | None = None) -> list[TracedSource]:
    """CC-14: the source lines of each traced code object outside torch; raises OSError when one has no source.
    `states` is given each file's status as it was before its bytes were read (`file_states.state`), where it has
    one."""
    found: dict[tuple[str, int | str, int | str], TracedSource] = {}
    files: dict[str, tuple[bytes, list[int]] | None] = {}
    for code in codes:
        path = os.path.abspath(code.co_filename)
        if path.startswith(_TORCH_DIR):
            continue
        qualname = getattr(code, "co_qualname", code.co_name)  # co_qualname: Python 3.11+
        lines = [line for _, _, line in code.co_lines() if line is not None]
        first, last = code.co_firstlineno, max(lines, default=code.co_firstlineno)
        if (path, first, last) not in found:
            span = _lines_span(path, first, last, files, states)
            if span is None:
                made = generated.identify(code) or code_identity.identify(code)
                if made is None:
                    raise OSError(f"the source of {qualname} ({code.co_filename}) cannot be read")
                found[made] = TracedSource(made[1], made[0], 0, 0, made[2])
                continue
            found[(path, first, last)] = TracedSource(qualname, path, first, last, *span)
    return sorted(found.values(), key=lambda s: (s.file, s.first))


def _lines_span(path: str, first: int, last: int, files: dict[str, tuple[bytes, list[int]] | None],
                states: dict[str, list[int]] | None = None) -> tuple[str, int, int] | None:
    """The SHA-256 of lines `first`..`last` (1-based, inclusive; a line ends as Python's compiler counts it: LF,
    CR LF or CR) and their byte offsets in the file, or None when it cannot be read."""
    known = _file(path, files, states)
    if known is not None and not known[1]:
        known[1].extend([0, *itertools.accumulate(map(len, known[0].splitlines(keepends=True)))])
    if known is None or not 1 <= first <= last < len(known[1]):
        return None
    text, offsets = known
    start, end = offsets[first - 1], offsets[last]
    return hashlib.sha256(text[start:end]).hexdigest(), start, end


def _file(path: str, files: dict[str, tuple[bytes, list[int]] | None],
          states: dict[str, list[int]] | None = None) -> tuple[bytes, list[int]] | None:
    """The file's bytes and its line offsets (empty until `_lines_span` needs them), None when it cannot be read;
    `files` keeps them, so that one check reads a file once. `states` is given the file's status from before the
    read, where it has one (`file_states`)."""
    if path not in files:
        known = _opened(path)
        files[path] = None
        if known is not None:
            try:
                with open(known[0], "rb") as handle:  # closes the descriptor
                    files[path] = handle.read(), []
            except OSError:
                return None
            found = file_states.state(known[1]) if states is not None else None
            if states is not None and found is not None:
                states[path] = found
    return files[path]


def changed_sources(sources: list[TracedSource], states: Any = None) -> list[str]:
    """CC-14: the traced code whose lines differ now (edited, moved in bytes and in lines, or gone), each as
    `qualname (file:first)`; code Python generated for a dataclass or namedtuple (`generated`), as the class whose
    fields changed. A source is the same when its file has the status recorded in `states` (`file_states`: not
    written since its bytes were read), else when its bytes are where they were in the file, or else when its lines
    are: the second reads only the bytes from a file's first recorded span to its last, once (reading GPT-2's 16
    whole files took 0.6 ms; its 67 spans one by one 0.2 ms, most of it in the calls) and splits no file into
    lines."""
    changed = []
    same = file_states.unchanged(states)
    files: dict[str, tuple[bytes, list[int]] | None] = {}
    opened: dict[str, tuple[int, int, int, bytes] | None] = {}
    sources = [s for s in sources if s.file not in same] if same else sources
    covers = _covers(sources)
    try:
        for s in sources:
            if s.file in generated.MARKERS.values():
                if generated.changed(s.file, s.qualname, s.sha256):
                    changed.append(f"{s.qualname} (the fields of {s.file[1:-1]} {s.qualname.rpartition('.')[0]})")
            elif code_identity.is_marker(s.file):
                if code_identity.changed(s.file, s.qualname, s.sha256):
                    changed.append(f"{s.qualname} ({s.file}, its code differs)")
            elif (not _same_bytes(s, opened, covers)
                  and (_lines_span(s.file, s.first, s.last, files) or ("",))[0] != s.sha256):
                changed.append(f"{s.qualname} ({s.file}:{s.first})")
    finally:
        _close(opened)
    return changed


#: the most bytes read at once to cover a file's recorded spans; past it, each span is read alone
_COVER_MAX = 1 << 20


def _covers(sources: list[TracedSource]) -> dict[Any, tuple[int, int]]:
    """By file, the bytes from the first recorded span's start to the last one's end (spans that are not two ints
    are left to `_same_bytes` to refuse)."""
    covers: dict[Any, tuple[int, int]] = {}
    for s in sources:
        if type(s.start) is int and type(s.end) is int and 0 <= s.start < s.end:
            low, high = covers.get(s.file, (s.start, s.end))
            covers[s.file] = (min(low, s.start), max(high, s.end))
    return covers


def _same_bytes(source: TracedSource, opened: dict[str, tuple[int, int, int, bytes] | None],
                covers: dict[Any, tuple[int, int]]) -> bool:
    """Whether the source's bytes are where they were; False when they cannot be read (the lines then decide).
    `opened` holds the last file's descriptor, size and the bytes covering its spans (`covers`) from where they
    start: a record lists its sources by file, so each file is opened and read once, and one descriptor at a time
    is held (a record naming thousands of files needs no more)."""
    if source.file not in opened:
        _close(opened)
        opened[source.file] = _read_cover(source.file, covers.get(source.file))
    known = opened[source.file]
    start, end = source.start, source.end
    if known is None or type(start) is not int or type(end) is not int or not 0 <= start < end <= known[1]:
        return False
    descriptor, _, low, cover = known
    if low <= start and end <= low + len(cover):
        read = cover[start - low:end - low]
    else:
        try:
            read = os.pread(descriptor, end - start, start)
        except OSError:  # EIO from a failing disk or a network file system: not known to be the same
            return False
    return hashlib.sha256(read).hexdigest() == source.sha256


def _read_cover(path: str, cover: tuple[int, int] | None) -> tuple[int, int, int, bytes] | None:
    """The file opened (`_opened`), with the bytes of `cover` that it holds (none past `_COVER_MAX`, or where
    the read fails: each span is then read alone)."""
    known = _opened(path)
    if known is None:
        return None
    descriptor, size = known[0], known[1].st_size
    if cover is None or cover[1] - cover[0] > _COVER_MAX or cover[0] >= size:
        return descriptor, size, 0, b""
    try:
        return descriptor, size, cover[0], os.pread(descriptor, min(cover[1], size) - cover[0], cover[0])
    except OSError:
        return descriptor, size, 0, b""


def _close(opened: dict[str, tuple[int, int, int, bytes] | None]) -> None:
    for known in opened.values():
        if known is not None:
            os.close(known[0])
    opened.clear()


def _opened(path: str) -> tuple[int, os.stat_result] | None:
    """A regular file's descriptor and status, None when it cannot be opened (or is no regular file: a FIFO is not
    waited on)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        status = os.fstat(descriptor)
    except OSError:
        status = None
    if status is None or not stat.S_ISREG(status.st_mode):
        os.close(descriptor)
        return None
    return descriptor, status
