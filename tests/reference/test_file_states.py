"""White-box: a traced file known unchanged by its status (`file_states`, `record.changed_sources`; SPEC CC-14;
issue 29 item 7). A file whose status is the recorded one is not read; any other status, a file changed too
recently to be told apart, or a recorded state of another form, and its spans are read and compared as before."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from torchair_ref.inference import file_states, record

_SOURCE = b"def helper(x):\n    return x + 1\n"


def _traced(path: Path, monkeypatch: pytest.MonkeyPatch, racy_ns: int = 0) -> tuple[record.TracedSource, dict]:
    """The traced source of `helper` in `path` as the cold process records it, with the states it records (no file
    is too recent with `racy_ns` 0)."""
    monkeypatch.setattr(file_states, "RACY_NS", racy_ns)
    namespace: dict = {}
    exec(compile(path.read_bytes(), str(path), "exec"), namespace)  # noqa: S102 - the test's own source
    states: dict = {}
    [source] = record.traced_sources([namespace["helper"].__code__], states)
    return source, states


def test_a_file_changed_just_now_gets_no_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file written less than RACY_NS before the read, or in the future, is read at every warm start."""
    path = tmp_path / "model.py"
    path.write_bytes(_SOURCE)
    status = os.stat(path)
    changed = max(status.st_mtime_ns, status.st_ctime_ns)
    assert file_states.state(status, changed + file_states.RACY_NS - 1) is None
    assert file_states.state(status, changed - 1) is None
    assert file_states.state(status, changed + file_states.RACY_NS) == [
        status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns]
    _, states = _traced(path, monkeypatch, racy_ns=file_states.RACY_NS)
    assert states == {}  # written a moment ago


def test_an_unchanged_file_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file whose status is the recorded one is taken as the same bytes: a recorded digest that no longer matches
    them (here, on purpose) is not even compared; without the state the bytes decide."""
    path = tmp_path / "model.py"
    path.write_bytes(_SOURCE)
    source, states = _traced(path, monkeypatch)
    assert states == {str(path.resolve()): file_states.state(os.stat(path), 1 << 62)}
    assert record.changed_sources([source], states) == []
    wrong = record.TracedSource(source.qualname, source.file, source.first, source.last, "0" * 64, source.start,
                                source.end)
    assert record.changed_sources([wrong], states) == []
    assert record.changed_sources([wrong]) == [f"helper ({source.file}:1)"]


@pytest.mark.parametrize("how", ["same size, times put back", "replaced by a rename", "touched"])
def test_a_file_written_since_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """A write moves the change time (which `os.utime` cannot put back), a rename gives another inode: the spans are
    then read, and a change of the traced lines is found even where the size and modification time are the
    recorded ones; a file only touched is read and found the same."""
    path = tmp_path / "model.py"
    path.write_bytes(_SOURCE)
    source, states = _traced(path, monkeypatch)
    before = os.stat(path)
    edited = _SOURCE.replace(b"+ 1", b"- 1")
    if how == "same size, times put back":
        path.write_bytes(edited)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    elif how == "replaced by a rename":
        other = tmp_path / "new.py"
        other.write_bytes(edited)
        os.replace(other, path)
    else:
        os.utime(path)
    assert file_states.unchanged(states) == frozenset()
    expected = [] if how == "touched" else [f"helper ({source.file}:1)"]
    assert record.changed_sources([source], states) == expected


@pytest.mark.parametrize("recorded", [None, [], "x", {"f": [1, 2, 3]}, {"f": "1,2,3,4,5"}, {1: [1, 2, 3, 4, 5]},
                                      {"a\x00b": [1, 2, 3, 4, 5]}])
def test_a_state_of_another_form_names_no_file(recorded: object) -> None:
    """A record's states that are not `{path: five numbers}` name no file as unchanged (its spans are read)."""
    assert file_states.unchanged(recorded) == frozenset()
