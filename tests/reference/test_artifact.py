"""The cache file format: atomic 0600 writes and a reader that refuses anything it cannot trust (CC-11, CC-17)."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torchair_ref.errors import CacheFileError
from torchair_ref.inference import artifact

PAYLOAD = {"name": "M.f(self, x)", "numbers": [1, 2.5, None], "nested": {"a": "b"}}


def test_round_trip_and_mode(tmp_path: Path) -> None:
    """CC-11: what write() wrote, read() returns; the file and its kernel files have mode 0600."""
    path = tmp_path / "m" / "f" / "compiled_module"
    artifact.write(str(path), PAYLOAD, {"abc.so": b"\x7fELF..."})
    assert artifact.read(str(path)) == PAYLOAD
    for file in (path, path.parent / "kernels" / "abc.so"):
        assert stat.S_IMODE(file.stat().st_mode) == 0o600, (file, oct(file.stat().st_mode))
    assert sorted(p.name for p in path.parent.iterdir()) == ["compiled_module", "kernels"]


def test_failed_write_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CC-11: a write that fails before the rename leaves neither the target nor a temporary file."""
    path = tmp_path / "compiled_module"

    def no_rename(src: str, dst: str) -> None:
        raise OSError("disk went away")

    monkeypatch.setattr(os, "replace", no_rename)
    with pytest.raises(OSError, match="disk went away"):
        artifact.write(str(path), PAYLOAD)
    assert list(tmp_path.iterdir()) == [], list(tmp_path.iterdir())


def test_overwrite_is_whole(tmp_path: Path) -> None:
    """CC-11: a second write replaces the file whole (the race case: the last rename wins)."""
    path = tmp_path / "compiled_module"
    artifact.write(str(path), PAYLOAD)
    artifact.write(str(path), {"other": True})
    assert artifact.read(str(path)) == {"other": True}


def _kernel(tag: str) -> str:
    return (tag * 40)[:40] + ".so"  # the name `compilers.inductor` gives a kept kernel: 40 hex digits of its digest


def test_a_save_keeps_only_the_kernels_its_record_names(tmp_path: Path) -> None:
    """CC-11: a save after another one's (a racing cold process with its own Inductor cache built its own kernel)
    leaves in `kernels/` exactly the kernels its record names; other files there are not touched."""
    path = tmp_path / "f" / "compiled_module"
    artifact.write(str(path), {"kernels": ["a"]}, {_kernel("a"): b"A", _kernel("b"): b"B"})
    (path.parent / "kernels" / "notes.txt").write_bytes(b"not a kernel")
    artifact.write(str(path), {"kernels": ["c"]}, {_kernel("c"): b"C"})
    assert sorted(p.name for p in (path.parent / "kernels").iterdir()) == [_kernel("c"), "notes.txt"]
    artifact.write(str(path), {"kernels": []})
    assert sorted(p.name for p in (path.parent / "kernels").iterdir()) == ["notes.txt"]


def test_a_failed_save_removes_the_kernels_it_added(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CC-11: a save that fails after writing its kernels (no room for the `compiled_module`) removes the kernel files
    it added and keeps those the record already on disk names."""
    path = tmp_path / "f" / "compiled_module"
    artifact.write(str(path), {"kernels": ["a"]}, {_kernel("a"): b"A"})
    replace = os.replace

    def no_room_for_the_record(src: str, dst: str) -> None:
        if dst == str(path):
            raise OSError(28, "No space left on device")
        replace(src, dst)

    monkeypatch.setattr(os, "replace", no_room_for_the_record)
    with pytest.raises(OSError, match="No space left"):
        artifact.write(str(path), {"kernels": ["a", "d"]}, {_kernel("a"): b"A", _kernel("d"): b"D"})
    assert sorted(p.name for p in (path.parent / "kernels").iterdir()) == [_kernel("a")]
    assert sorted(p.name for p in path.parent.iterdir()) == ["compiled_module", "kernels"]
    assert artifact.read(str(path)) == {"kernels": ["a"]}


def _save_repeatedly(path: str, tag: str, rounds: int) -> None:
    for _ in range(rounds):
        artifact.write(path, {"kernels": [tag]}, {_kernel(tag): tag.encode() * 1000})


def test_racing_saves_leave_only_the_named_kernels(tmp_path: Path) -> None:
    """CC-11: two processes saving the same function with different kernels at the same time: afterwards `kernels/`
    holds exactly the kernel the surviving record names."""
    import multiprocessing

    path = tmp_path / "f" / "compiled_module"
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_save_repeatedly, args=(str(path), tag, 30)) for tag in "ab"]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0, worker.exitcode
    (named,) = artifact.read(str(path))["kernels"]
    assert sorted(p.name for p in (path.parent / "kernels").iterdir()) == [_kernel(named)]


@settings(max_examples=60, deadline=None)
@given(cut=st.integers(min_value=0, max_value=10_000))
def test_every_truncation_is_refused(tmp_path_factory: pytest.TempPathFactory, cut: int) -> None:
    """CC-17: a file cut at any offset is refused, never parsed into something else."""
    data = artifact.encode(PAYLOAD)
    cut = cut % len(data)
    with pytest.raises(artifact.BrokenCacheError):
        artifact.decode(data[:cut])


@settings(max_examples=100, deadline=None)
@given(position=st.integers(min_value=0), bit=st.integers(min_value=0, max_value=7))
def test_every_bit_flip_is_refused_or_harmless(position: int, bit: int) -> None:
    """CC-17: flipping any single bit is detected (magic, header or checksum)."""
    data = bytearray(artifact.encode(PAYLOAD))
    position %= len(data)
    data[position] ^= 1 << bit
    try:
        decoded = artifact.decode(bytes(data))
    except CacheFileError:  # a flip of the format digit reads as another version: stale, refused too
        return
    # A flip inside the header's JSON whitespace-insensitive parts can still decode: it must give the same payload.
    assert decoded == PAYLOAD, (position, bit)


def test_other_format_version_is_stale() -> None:
    """CC-17: another format version is reported as stale (rebuilt, not crashed on)."""
    data = artifact.encode(PAYLOAD).replace(b'"format": 1', b'"format": 2', 1)
    with pytest.raises(artifact.StaleCacheError, match="format version 2"):
        artifact.decode(data)


def test_foreign_file_is_refused() -> None:
    """CC-17: a file from another implementation (a pickle, say) is refused by its magic line."""
    with pytest.raises(artifact.BrokenCacheError, match="not a torchair_ref cache"):
        artifact.decode(b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00")


def test_wrong_mode_symlink_and_owner_are_refused(tmp_path: Path) -> None:
    """CC-17: mode other than 0600, a symlink, or (as root) another owner: refused with the reason."""
    path = tmp_path / "compiled_module"
    artifact.write(str(path), PAYLOAD)
    path.chmod(0o644)
    with pytest.raises(artifact.BrokenCacheError, match="mode 0644"):
        artifact.read(str(path))
    path.chmod(0o600)
    link = tmp_path / "link"
    link.symlink_to(path)
    with pytest.raises(artifact.BrokenCacheError, match="symlink"):
        artifact.read(str(link))
    if os.geteuid() == 0:
        os.chown(path, 4242, 4242)
        with pytest.raises(artifact.BrokenCacheError, match="owned by uid 4242"):
            artifact.read(str(path))


def test_environment_fingerprint_names_python_torch_and_device() -> None:
    """CC-17: the fingerprint holds what makes a cache unusable elsewhere."""
    import torch

    env = artifact.environment("cpu")
    assert env["torch"] == torch.__version__ and env["device"] == "cpu"
    # the same text as a plain str: a warm start compares it with the record's without torch's version parser
    assert type(env["torch"]) is str
    assert {"python", "bytecode_magic", "cpu_capability", "torch_npu", "cann"} <= set(env), env


def test_a_save_leaves_a_folder_another_process_is_saving_alone(tmp_path: Path) -> None:
    """CC-11: while another writer holds the `<func>` folder's lock (its save under way, or stopped mid-way), a save
    returns False at once and writes nothing; once the lock is free it saves."""
    import fcntl

    path = tmp_path / "f" / "compiled_module"
    path.parent.mkdir()
    held = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert artifact.write(str(path), {"kernels": ["a"]}, {_kernel("a"): b"A"}) is False
        assert list(path.parent.iterdir()) == []
    finally:
        os.close(held)
    assert artifact.write(str(path), {"kernels": ["a"]}, {_kernel("a"): b"A"}) is True
    assert artifact.read(str(path)) == {"kernels": ["a"]}
