"""The file layer (`torchair_ref._files`): one atomic writer with the caller's mode, temporary files of killed
writers removed, nothing half-written left (CC-11, EX-2). That no layer imports back upwards is tests/test_layers.py."""
from __future__ import annotations

import fcntl
import os
import stat
from pathlib import Path

import pytest

from torchair_ref import _files


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("mode", [0o600, 0o644])
def test_atomic_write_gives_the_callers_mode(tmp_path: Path, mode: int) -> None:
    previous = os.umask(0o022)
    try:
        _files.atomic_write(str(tmp_path / "out"), b"data", mode=mode)
    finally:
        os.umask(previous)
    assert (tmp_path / "out").read_bytes() == b"data" and _mode(tmp_path / "out") == mode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_failed_write_leaves_the_previous_file_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CC-11: a write that fails before its rename (here: fsync, as on a full disk) leaves the old file whole."""
    target = tmp_path / "out"
    _files.atomic_write(str(target), b"old", mode=0o600)

    def no_room(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_files.os, "fsync", no_room)
    with pytest.raises(OSError, match="No space"):
        _files.atomic_write(str(target), b"new", mode=0o600)
    monkeypatch.undo()
    assert target.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_stage_leaves_the_target_alone(tmp_path: Path) -> None:
    """EX-2: a staged file lies beside its target, complete, until the caller renames it."""
    target = tmp_path / "w.bin"
    target.write_bytes(b"previous")
    temporary = Path(_files.stage(str(target), b"next", mode=0o600))
    assert temporary.parent == tmp_path and temporary.read_bytes() == b"next" and target.read_bytes() == b"previous"
    assert temporary.name.startswith(".w.bin.") and temporary.name.endswith(".tmp")


def test_temps_of_killed_writers_go_those_of_live_ones_stay(tmp_path: Path) -> None:
    """CC-11: a temporary file whose flock is free belonged to a killed writer; a locked one is being written."""
    dead, live = tmp_path / ".out.dead.tmp", tmp_path / ".out.live.tmp"
    dead.write_bytes(b"half")
    live.write_bytes(b"half")
    fd = os.open(live, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _files.atomic_write(str(tmp_path / "out"), b"whole", mode=0o600)
        assert sorted(p.name for p in tmp_path.iterdir()) == [".out.live.tmp", "out"]
    finally:
        os.close(fd)
