"""What makes a warm start's code identity cheaper keeps it exact (CC-14, CC-21 f, CC-22; issue 29 item 7).

- Traced lines are checked by their bytes in the file (`record.changed_sources`), else by their line numbers: the
  same lines as Python's compiler counts them, whatever the line ends; a change to them, or one that moves them
  both in bytes and in lines, is stale.
- Within `guard_values.digests_kept` (one warm start's check), each class is digested once; outside it, in
  another thread or in a context copied inside it, every call digests the class as it is then. A warm start opens
  it, and the next warm start in the same process sees a class changed in between.
"""
from __future__ import annotations

import contextvars
import json
import os
import subprocess
import sys
import textwrap
import threading
import types

import pytest

from tests.conftest import program_env
from torchair_ref.inference import guard_values, record

_SOURCE = "def helper(x):\n    y = x + 1\n    return y * 2\n"


def _module_file(tmp_path, text: bytes, name: str = "traced_mod.py") -> tuple[str, types.CodeType]:
    path = tmp_path / name
    path.write_bytes(text)
    code = compile(text, str(path), "exec")
    function_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    return str(path), function_code


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"])
def test_traced_lines_are_found_by_their_bytes_whatever_the_line_ends(tmp_path, end: bytes) -> None:
    """CC-14: the recorded bytes are lines first..last as the compiler numbered them, line ends included."""
    head = end.join([b"# a comment", b"", b"import os"]) + end
    text = head + _SOURCE.encode().replace(b"\n", end) + b"VALUE = 3" + end
    path, code = _module_file(tmp_path, text)
    [source] = record.traced_sources([code])
    assert (source.first, source.last) == (4, 6)
    assert text[source.start:source.end] == _SOURCE.encode().replace(b"\n", end)
    assert record.changed_sources([source]) == []


@pytest.mark.parametrize("change", ["inside", "line-added-above", "line-removed-above", "truncated", "gone",
                                    "same-lines-longer-above", "same-bytes-more-lines-above"])
def test_a_change_to_the_traced_lines_is_stale_and_a_change_around_them_is_not(tmp_path, change: str) -> None:
    """CC-14: an edit inside the lines, a line added or removed above them (they move), a shorter or missing file:
    stale. The same lines where they were (a longer comment above), or the same bytes where they were (more,
    shorter lines above): the same code, not stale."""
    body = _SOURCE.encode()
    text = b"# head\n" + body + b"# tail\n"
    path, code = _module_file(tmp_path, text)
    [source] = record.traced_sources([code])
    edited = {
        "inside": text.replace(b"x + 1", b"x + 2"),
        "line-added-above": b"# head\n\n" + body + b"# tail\n",
        "line-removed-above": body + b"# tail\n",
        "truncated": text[:source.end - 1],
        "same-lines-longer-above": b"# a longer head\n" + body,
        "same-bytes-more-lines-above": b"#\n#\n##\n" + body,  # as long as "# head\\n"
    }.get(change)
    if edited is None:
        (tmp_path / "traced_mod.py").unlink()
    else:
        (tmp_path / "traced_mod.py").write_bytes(edited)
    expected = [] if change.startswith("same-") else [f"helper ({path}:2)"]
    assert record.changed_sources([source]) == expected


def test_a_recorded_span_that_does_not_fit_the_file_falls_back_to_the_lines(tmp_path) -> None:
    """CC-17: offsets damaged in a record (past the end, reversed, negative, not integers) never crash: the lines
    decide."""
    path, code = _module_file(tmp_path, b"# head\n" + _SOURCE.encode())
    [source] = record.traced_sources([code])
    damaged = [record.TracedSource(source.qualname, path, source.first, source.last, source.sha256, start, end)
               for start, end in ((source.start, 10**9), (source.end, source.start), (-1, source.end), ("7", None))]
    assert record.changed_sources(damaged) == []
    (tmp_path / "traced_mod.py").write_bytes(b"# head\n" + _SOURCE.encode().replace(b"+ 1", b"+ 3"))
    assert record.changed_sources(damaged) == [f"helper ({path}:2)"] * 4


@pytest.mark.parametrize("replaced_by", ["fifo", "directory"])
def test_a_traced_file_replaced_by_no_regular_file_is_stale_without_waiting_on_it(tmp_path, replaced_by: str) -> None:
    """CC-14/CC-17: the traced lines are read only from a regular file: a FIFO in its place is not waited on (no
    writer ever comes), a directory is not read; either is a change. No descriptor is left open."""
    path, code = _module_file(tmp_path, b"# head\n" + _SOURCE.encode())
    [source] = record.traced_sources([code])
    (tmp_path / "traced_mod.py").unlink()
    if replaced_by == "fifo":
        os.mkfifo(path)
    else:
        os.mkdir(path)
    before = set(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else set()
    assert record.changed_sources([source, source]) == [f"helper ({path}:2)"] * 2
    if before:
        assert set(os.listdir("/proc/self/fd")) == before


def test_a_read_error_on_the_traced_bytes_leaves_the_decision_to_the_lines(tmp_path, monkeypatch) -> None:
    """CC-17: an I/O error reading the recorded span (EIO from a failing disk or a network file system) is not a
    crash that throws the whole cache away: the bytes are not known to be the same, and the lines decide."""
    import errno

    path, code = _module_file(tmp_path, b"# head\n" + _SOURCE.encode())
    [source] = record.traced_sources([code])

    def failing(*args: object) -> bytes:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "pread", failing)
    assert record.changed_sources([source]) == []
    (tmp_path / "traced_mod.py").write_bytes(b"# head\n" + _SOURCE.encode().replace(b"+ 1", b"+ 3"))
    assert record.changed_sources([source]) == [f"helper ({path}:2)"]


@pytest.mark.parametrize("cover_max", [1 << 20, 40])
def test_the_spans_of_one_file_are_read_at_once_unless_they_lie_far_apart(tmp_path, monkeypatch, cover_max) -> None:
    """CC-14: a file's recorded spans are read with one read from the first to the last (each alone where that
    would be more than `_COVER_MAX` bytes), and an edit in any one of them is found either way."""
    functions = [_SOURCE.replace("helper", f"helper{n}").replace("+ 1", f"+ {n}") for n in range(3)]
    text = ("# head\n" + "\n# between\n".join(functions)).encode()
    path = tmp_path / "three.py"
    path.write_bytes(text)
    codes = [c for c in compile(text, str(path), "exec").co_consts if isinstance(c, types.CodeType)]
    sources = record.traced_sources(codes)
    reads = []
    real = os.pread

    def counted(*args: int) -> bytes:
        reads.append(args[1:])
        return real(*args)

    monkeypatch.setattr(os, "pread", counted)
    monkeypatch.setattr(record, "_COVER_MAX", cover_max)
    assert record.changed_sources(sources) == []
    assert len(reads) == (1 if cover_max > len(text) else 3)
    path.write_bytes(text.replace(b"x + 1", b"x - 1"))
    assert record.changed_sources(sources) == [f"helper1 ({path}:7)"]


@pytest.mark.skipif(sys.platform == "win32" or not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_sources_in_many_files_hold_one_descriptor_at_a_time(tmp_path) -> None:
    """CC-14: a record naming more traced files than the process may open at once is checked as well as one naming
    a few (the files are opened one after the other, not all together)."""
    import resource

    sources = []
    for n in range(300):
        sources += record.traced_sources([_module_file(tmp_path, _SOURCE.encode(), f"m{n:03}.py")[1]])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + 16, hard))
    try:
        assert record.changed_sources(sources) == []
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


class _Base:
    def shared(self) -> int:
        return 1


class _Model(_Base):
    def forward(self) -> int:
        return 2


def test_within_digests_kept_a_class_is_digested_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each class of the MRO is read once within the block; the digest is the one computed outside it."""
    outside = guard_values.class_digest(_Model)
    reads: list[type] = []
    name_of = guard_values.qualified_name

    def counted(obj: object) -> str:
        reads.append(obj)  # type: ignore[arg-type]
        return name_of(obj)

    monkeypatch.setattr(guard_values, "qualified_name", counted)  # called once per class of the MRO digested
    with guard_values.digests_kept():
        assert [guard_values.class_digest(_Model) for _ in range(3)] == [outside] * 3
        guard_values.class_digest(_Base)
    assert reads == [_Model, _Base]
    assert guard_values.class_digest(_Model) == outside
    assert reads == [_Model, _Base, _Model, _Base]


def test_within_digests_kept_a_class_name_is_looked_up_once() -> None:
    """`type_named` within the block finds each name once; the next block (the next warm start) finds the class the
    module holds by then, and so does a lookup outside any block."""
    module = types.ModuleType("torchair_test_named")
    module.Thing = type("Thing", (), {"__module__": "torchair_test_named"})
    first = module.Thing
    sys.modules["torchair_test_named"] = module
    try:
        with guard_values.digests_kept():
            assert guard_values.type_named("torchair_test_named.Thing") is first
            module.Thing = type("Thing", (), {"__module__": "torchair_test_named"})
            assert guard_values.type_named("torchair_test_named.Thing") is first
        assert guard_values.type_named("torchair_test_named.Thing") is module.Thing is not first
        with guard_values.digests_kept():
            assert guard_values.type_named("torchair_test_named.Thing") is module.Thing
            assert guard_values.type_named("torchair_test_named.Gone") is None
    finally:
        del sys.modules["torchair_test_named"]


def test_a_class_changed_after_the_block_is_digested_again() -> None:
    """Outside the block (and in the next warm start's block) a changed method changes the digest."""
    class Local:
        def f(self) -> int:
            return 1

    with guard_values.digests_kept():
        before = guard_values.class_digest(Local)
        Local.f = lambda self: 2  # type: ignore[method-assign]
        assert guard_values.class_digest(Local) == before  # one check: the class Dynamo's TYPE_MATCH named
    assert guard_values.class_digest(Local) != before
    with guard_values.digests_kept():
        assert guard_values.class_digest(Local) != before


def test_digests_kept_belongs_to_its_thread() -> None:
    """Another thread's digests are its own: a class it changes is digested afresh there."""
    class Local:
        def f(self) -> int:
            return 1

    seen: list[str | None] = []
    with guard_values.digests_kept():
        before = guard_values.class_digest(Local)
        Local.f = lambda self: 2  # type: ignore[method-assign]

        worker = threading.Thread(target=lambda: seen.append(guard_values.class_digest(Local)))
        worker.start()
        worker.join()
    assert seen[0] != before


def test_a_context_copied_inside_the_block_digests_afresh_after_it() -> None:
    """An asyncio task or a copied context holds the block's memory on: once the block ends it is closed."""
    class Local:
        def f(self) -> int:
            return 1

    with guard_values.digests_kept():
        before = guard_values.class_digest(Local)
        copied = contextvars.copy_context()
    Local.f = lambda self: 2  # type: ignore[method-assign]
    assert copied.run(guard_values.class_digest, Local) != before


_TWO_WARM_STARTS = """
import collections, json, sys, warnings
import torch, torchair_ref
from torchair_conformance import process
from torchair_ref.inference import guard_values

config = torchair_ref.CompilerConfig()
config.debug.run_eagerly = True


class Block(torch.nn.Module):
    def forward(self, x):
        return x * 2


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = Block(), Block()
        self.cached = torchair_ref.inference.cache_compile(self._run, config=config, cache_dir=sys.argv[1])

    def _run(self, x):
        return self.b(self.a(x)) + 1


x = torch.ones(2, 3)
if sys.argv[2] == "cold":
    Model().cached(x)
    print(json.dumps(process.traced()))
    sys.exit()
computed = collections.Counter()
own_parts = guard_values._own_parts


def counted(klass, kept):
    if kept is None or ~id(klass) not in kept:
        computed[klass.__qualname__] += 1
    return own_parts(klass, kept)


guard_values._own_parts = counted
first = Model().cached(x)
report = {"computed": dict(computed), "first": process.traced()["unique_graphs"]}
Block.helper = lambda self: 3  # a member no trace reads: the class's digest changes, and only that
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    second = Model().cached(x)
report.update(second=process.traced()["unique_graphs"], warnings=[str(w.message) for w in caught],
              equal=bool(torch.equal(first, second)))
print(json.dumps(report))
"""


def test_a_warm_start_digests_each_class_once_and_the_next_one_sees_a_changed_class(tmp_path) -> None:
    """CC-14/CC-21 (f): in one warm process, the first warm start reads each class of its guards once (the scope is
    open: `Block`, guarded twice, is digested once, where it was twice before); a member added to `Block` afterwards
    makes the next warm start of the same file reject it and compile, as a cold `torch.compile` of the changed
    class would."""
    script = tmp_path / "two_warm.py"
    script.write_text(textwrap.dedent(_TWO_WARM_STARTS))
    def run(phase: str) -> dict:
        done = subprocess.run([sys.executable, str(script), str(tmp_path / "cache"), phase], cwd=tmp_path,
                              env=program_env(), capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    assert run("cold")["unique_graphs"] == 1
    warm = run("warm")
    assert warm["first"] == 0 and warm["computed"].get("Block") == 1, warm
    assert all(count == 1 for count in warm["computed"].values()), warm
    assert warm["second"] == 1 and warm["equal"], warm
    assert any("TYPE_MATCH" in w and "Block" in w for w in warm["warnings"]), warm["warnings"]
