"""What makes a warm start's code identity cheaper keeps it exact (CC-14, CC-21 f, CC-22; issue 29 item 7).

- Traced lines are checked by their bytes in the file (`record.changed_sources`): the same lines as Python's
  compiler counts them, whatever the line ends, and any change to them, or anything that moves them, is stale.
- Within `guard_values.digests_kept` (one warm start's check), each class is digested once; outside it, and in
  another thread, every call digests the class as it is then.
"""
from __future__ import annotations

import threading
import types

import pytest
from hypothesis import given
from hypothesis import strategies as st

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


@given(st.sampled_from(["inside", "line-added-above", "line-removed-above", "truncated", "gone",
                        "same-lines-longer-above", "same-bytes-more-lines-above"]))
def test_a_change_to_the_traced_lines_is_stale_and_a_change_around_them_is_not(tmp_path_factory, change) -> None:
    """CC-14: an edit inside the lines, a line added or removed above them (they move), a shorter or missing file:
    stale. The same lines where they were (a longer comment above), or the same bytes where they were (more,
    shorter lines above): the same code, not stale."""
    tmp_path = tmp_path_factory.mktemp("lines")
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
    """CC-17: offsets damaged in a record (past the end, reversed, negative) never crash: the lines decide."""
    path, code = _module_file(tmp_path, b"# head\n" + _SOURCE.encode())
    [source] = record.traced_sources([code])
    damaged = [record.TracedSource(source.qualname, path, source.first, source.last, source.sha256, start, end)
               for start, end in ((source.start, 10**9), (source.end, source.start), (-1, source.end))]
    assert record.changed_sources(damaged) == []
    (tmp_path / "traced_mod.py").write_bytes(b"# head\n" + _SOURCE.encode().replace(b"+ 1", b"+ 3"))
    assert record.changed_sources(damaged) == [f"helper ({path}:2)"] * 3


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
