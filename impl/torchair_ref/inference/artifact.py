"""The on-disk cache format (SPEC CC-11, CC-14, CC-17, RC-1).

A `compiled_module` file is, in order:

1. the magic line `TORCHAIR_REF_CACHE\\n`;
2. a header line, JSON: `{"format": 1, "payload_bytes": N, "payload_sha256": "<hex>"}`;
3. the payload: N bytes of UTF-8 JSON (see `cached.py` for its keys: the function, Dynamo's bytecode, the graph
   record, the environment fingerprint).

Nothing in it is unpickled: JSON, base64 `marshal` data for the bytecode, and names of importable objects. Files
the graph record refers to (kept kernels, `ge_cache=True`) live in `<func>/kernels/`, named by their SHA-256, which
the record also holds. Every file is written to a temporary file in the same folder with mode 0600, flushed to
disk and renamed over the target, so a killed writer never leaves a file that loads, and of two writers racing the
last rename wins with a whole file. A writer holds an flock on its temporary file until the rename; the next write
of the same target removes the temporary files whose lock is free, i.e. those of writers that were killed.
A reader refuses (`BrokenCacheError`) a symlink, anything but a regular file (a FIFO without waiting on it), a file
owned by someone else, a mode other than 0600, a file over `MAX_FILE_BYTES` (seen by `fstat` before anything is
read), a bad magic, header (deeply nested JSON included), length or checksum, and another format version. A file
is read from one descriptor, checked there, never by its path again (`read_checked`, kept kernels too). The cache
root and every folder below it must be directories of the current user that no one else can write in
(`unsafe_level`); the writer creates them with mode 0700 and checks them again after creating them.
"""
from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import importlib.util
import json
import os
import platform
import re
import stat
import sys
import tempfile
from typing import Any, Callable

import torch

MAGIC = b"TORCHAIR_REF_CACHE\n"
FORMAT_VERSION = 1
_MAX_HEADER_BYTES = 4096
#: the largest cache or kernel file read (checked with fstat before reading; read at most this many bytes)
MAX_FILE_BYTES = 1 << 30
KERNEL_DIR = "kernels"
_TEMP_SUFFIX = ".tmp"
_KERNEL_FILE = re.compile(r"^[0-9a-f]{40}\.so$")


class BrokenCacheError(ValueError):
    """CC-17: a cache file that must not be trusted (damaged, foreign, wrong owner or mode)."""


class StaleCacheError(BrokenCacheError):
    """CC-17: a valid cache written by another format version or environment (Python, torch, device, CANN)."""


def environment(device: str) -> dict[str, Any]:
    """The environment fingerprint: a cache written under another one is stale.

    Besides versions it holds torch's git revision (two builds of one version differ), this package's version, and
    the CPU's feature flags: Inductor compiles C++ kernels for the host CPU (`-march=native`), so a kernel is only
    kept for a CPU with the same extensions, not merely the same ATen capability.
    """
    from torchair_ref import __version__

    npu = sys.modules.get("torch_npu")
    return {
        "python": platform.python_version(),
        "bytecode_magic": importlib.util.MAGIC_NUMBER.hex(),
        "torch": torch.__version__,
        "torch_git": getattr(torch.version, "git_version", None),
        "torchair_ref": __version__,
        "device": device,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "cpu_features": cpu_features(),
        "cuda": torch.version.cuda if device == "cuda" else None,
        "torch_npu": getattr(npu, "__version__", None),
        "cann": getattr(getattr(npu, "version", None), "cann", None),
    }


@functools.lru_cache(maxsize=1)
def cpu_features() -> str:
    """A digest of the host CPU's model and feature flags (what `-march=native` compiles for)."""
    described = platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key = line.split(":", 1)[0].strip()
                if key in ("flags", "Features", "model name", "vendor_id", "cpu family"):
                    described += "\n" + line.strip()
                if key in ("flags", "Features"):
                    break
    except OSError:  # no /proc (macOS): the processor's name; on Linux it would cost a `uname -p` process per start
        described += " " + platform.processor()
    return hashlib.sha256(described.encode()).hexdigest()[:16]


def encode(payload: dict[str, Any]) -> bytes:
    body = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode("utf-8")
    header = {"format": FORMAT_VERSION, "payload_bytes": len(body), "payload_sha256": hashlib.sha256(body).hexdigest()}
    return MAGIC + json.dumps(header, sort_keys=True).encode("ascii") + b"\n" + body


def decode(data: bytes, where: str = "cache file") -> dict[str, Any]:
    """Check and parse the bytes of a `compiled_module` file."""
    if not data.startswith(MAGIC):
        raise BrokenCacheError(f"{where} is not a torchair_ref cache (no {MAGIC!r} line): another implementation's?")
    end = data.find(b"\n", len(MAGIC), len(MAGIC) + _MAX_HEADER_BYTES)
    if end < 0:
        raise BrokenCacheError(f"{where} has no complete header line (truncated?)")
    try:
        header = json.loads(data[len(MAGIC):end])
        version, size, digest = header["format"], header["payload_bytes"], header["payload_sha256"]
    except (ValueError, KeyError, TypeError, RecursionError) as exc:  # RecursionError: deeply nested JSON
        raise BrokenCacheError(f"{where} has a corrupt header: {exc}") from exc
    if version != FORMAT_VERSION:
        raise StaleCacheError(f"{where} has format version {version!r}; this torchair_ref reads {FORMAT_VERSION}")
    body = data[end + 1:]
    if len(body) != size:
        raise BrokenCacheError(f"{where} payload has {len(body)} bytes, its header says {size} (truncated?)")
    if hashlib.sha256(body).hexdigest() != digest:
        raise BrokenCacheError(f"{where} payload does not match its SHA-256 (corrupted)")
    try:
        payload = json.loads(body.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise BrokenCacheError(f"{where} payload is not valid JSON: {exc}") from exc
    if not isinstance(payload, dict):
        raise BrokenCacheError(f"{where} payload is a {type(payload).__name__}, not an object")
    return payload


def read(path: str) -> dict[str, Any]:
    """CC-14/CC-17/RC-1: read and check a cache file; raises `BrokenCacheError` with the reason."""
    return decode(read_checked(path, what="cache file"), f"cache file {path}")


def read_checked(
    path: str, *, what: str = "cache file", limit: int = MAX_FILE_BYTES,
    check: Callable[[str, os.stat_result], None] | None = None,
) -> bytes:
    """CC-17: the bytes of `path`, read from one descriptor that was checked, never by the path again.

    The file is opened with `O_NOFOLLOW | O_NONBLOCK` (a symlink is refused, a FIFO is never waited on), `fstat`ed
    and checked (`check`, by default `check_owned_private`), its size compared with `limit` before anything is
    read, and at most `limit` bytes are read. Every failure is a `BrokenCacheError` naming the file; a missing file
    is one whose `__cause__` is a `FileNotFoundError`.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if os.path.islink(path):
            raise BrokenCacheError(f"{what} {path} is a symlink") from exc
        raise BrokenCacheError(f"{what} {path} cannot be opened: {exc}") from exc
    try:
        info = os.fstat(fd)
        (check or check_owned_private)(path, info)
        if info.st_size > limit:
            raise BrokenCacheError(
                f"{what} {path} has {info.st_size} bytes, more than the {limit} a torchair_ref cache file may have"
            )
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise BrokenCacheError(f"{what} {path} cannot be read: {exc}") from exc
    finally:
        os.close(fd)
    if total > limit:
        raise BrokenCacheError(f"{what} {path} grew past {limit} bytes while it was read")
    return b"".join(chunks)


def check_owned_private(path: str, info: os.stat_result) -> None:
    """CC-17/RC-3: a regular file, owned by the current user, mode 0600."""
    if not stat.S_ISREG(info.st_mode):
        raise BrokenCacheError(f"{path} is not a regular file")
    if info.st_uid != os.geteuid():
        raise BrokenCacheError(f"{path} is owned by uid {info.st_uid}, not by the current user (uid {os.geteuid()})")
    mode = stat.S_IMODE(info.st_mode)
    if mode != 0o600:
        raise BrokenCacheError(f"{path} has mode {mode:04o}; a cache file must have mode 0600")


def check_owned_unshared(path: str, info: os.stat_result) -> None:
    """CC-17: a regular file, owned by the current user, writable by no one else (a file of Inductor's own cache)."""
    if not stat.S_ISREG(info.st_mode):
        raise BrokenCacheError(f"{path} is not a regular file")
    if info.st_uid != os.geteuid():
        raise BrokenCacheError(f"{path} is owned by uid {info.st_uid}, not by the current user (uid {os.geteuid()})")
    if info.st_mode & 0o022:
        raise BrokenCacheError(f"{path} has mode {stat.S_IMODE(info.st_mode):04o}: writable by group or others")


def folder_problem(path: str, info: os.stat_result) -> str | None:
    """CC-17: why the cache folder `path` (lstat'ed as `info`) cannot be trusted, or None: it must be a real
    directory, owned by the current user, writable by no one else. The reason names the folder and the fix."""
    if stat.S_ISLNK(info.st_mode):
        return f"{path} is a symlink; remove it (the levels below the cache root are never followed)"
    if not stat.S_ISDIR(info.st_mode):
        return f"{path} is not a directory; remove it"
    if info.st_uid != os.geteuid():
        return (f"{path} is owned by uid {info.st_uid}, not by the current user (uid {os.geteuid()}); "
                "remove it, or use a cache_dir of your own")
    if info.st_mode & 0o022:
        mode = stat.S_IMODE(info.st_mode)
        return f"{path} has mode {mode:04o}: others can write in it; run `chmod go-w {path}` (or chmod 700 it)"
    return None


def private_levels(root: str, folder: str) -> list[str]:
    """The root and each folder below it down to `folder` (which must be below `root`), in order."""
    levels = [root]
    for part in os.path.relpath(folder, root).split(os.sep):
        if part != os.curdir:
            levels.append(os.path.join(levels[-1], part))
    return levels


def unsafe_level(root: str, folder: str) -> str | None:
    """CC-17: the reason the first existing level from `root` down to `folder` cannot be trusted, or None."""
    for level in private_levels(root, folder):
        try:
            info = os.lstat(level)
        except FileNotFoundError:
            return None
        problem = folder_problem(level, info)
        if problem is not None:
            return problem
    return None


def damaged_level(root: str, folder: str) -> str | None:
    """CC-17: the first level below `root` down to `folder` that is a file, FIFO, socket or device of ours where a
    folder should be (damage: the caller may remove it), if every level above it is a trusted folder; else None."""
    for level in private_levels(root, folder):
        try:
            info = os.lstat(level)
        except FileNotFoundError:
            return None
        if folder_problem(level, info) is None:
            continue
        mine = info.st_uid == os.geteuid() and not stat.S_ISLNK(info.st_mode) and not stat.S_ISDIR(info.st_mode)
        return level if mine and level != root else None
    return None


def make_private_levels(root: str, folder: str) -> None:
    """CC-11/CC-17: create the missing levels from `root` down to `folder`, each mode 0700, checking each one (made
    now or not) before going into it: `OSError` naming the level and the fix when one is not ours or writable by
    others."""
    parent = os.path.dirname(root)
    if parent and not os.path.isdir(parent):
        os.makedirs(parent, exist_ok=True)  # the caller's folders above the root
    for level in private_levels(root, folder):
        with contextlib.suppress(FileExistsError):
            os.mkdir(level, 0o700)
        problem = folder_problem(level, os.lstat(level))
        if problem is not None:  # checked before anything is made inside it
            raise OSError(f"the cache folder cannot be trusted: {problem}")


def write(path: str, payload: dict[str, Any], files: dict[str, bytes] | None = None) -> bool:
    """CC-11: write the cache atomically with mode 0600 (kernel files first, the `compiled_module` last); False when
    another process is saving this very `<func>` folder right now, which then leaves its save alone.

    One writer of a `<func>` folder at a time (an flock on the folder), so that `kernels/` then holds exactly the
    kernels the written record names: each save removes the others' (a racing cold process with an Inductor cache of
    its own built other ones), and a save that fails (no room) removes the kernel files it added. A process that finds
    the folder locked does not wait for the other's save (which may be slow or stopped): it computed the same
    function, and the other's file is what the next process loads."""
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    kernels = os.path.join(folder, KERNEL_DIR)
    names = set(files or {})
    lock = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        added = [n for n in names if not os.path.lexists(os.path.join(kernels, n))]
        try:
            for name, data in (files or {}).items():
                atomic_write(os.path.join(kernels, name), data)
            atomic_write(path, encode(payload))
        except BaseException:
            for name in added:
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(kernels, name))
            raise
        _remove_kernels_except(kernels, names)
        return True
    finally:
        os.close(lock)  # releases the flock


def _remove_kernels_except(kernels: str, keep: set[str]) -> None:
    """Remove the kernel files (`<hex>.so`, as `compilers.inductor` names them) that the record does not name."""
    try:
        listed = os.listdir(kernels)
    except FileNotFoundError:
        return
    for name in listed:
        if name not in keep and _KERNEL_FILE.match(name):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(kernels, name))


def atomic_write(path: str, data: bytes) -> None:
    """Write `data` to `path` through a 0600 temporary file in the same folder and a rename."""
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    prefix = "." + os.path.basename(path) + "."
    remove_stale_temps(folder, prefix)
    fd, tmp = _locked_temp(folder, prefix)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            os.replace(tmp, path)  # still holding the lock, so the complete temp file is never taken for a dead one
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    dir_fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _locked_temp(folder: str, prefix: str) -> tuple[int, str]:
    """A new temporary file, exclusively flock'ed for as long as it is open: the lock marks its writer as alive."""
    while True:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=_TEMP_SUFFIX)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(tmp))
        except FileNotFoundError:
            same = False
        if same:
            return fd, tmp
        # Another writer took it for a dead one's between mkstemp and flock, and removed it: take a new one.
        os.close(fd)


def remove_stale_temps(folder: str, prefix: str) -> None:
    """CC-11: remove the temporary files that killed writers left for this target (their flock died with them)."""
    try:
        names = [n for n in os.listdir(folder) if n.startswith(prefix) and n.endswith(_TEMP_SUFFIX)]
    except OSError:
        return
    for name in names:
        temp = os.path.join(folder, name)
        try:
            fd = os.open(temp, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # locked: its writer is still writing it
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                with contextlib.suppress(OSError):
                    os.unlink(temp)
        finally:
            os.close(fd)


def symlink_below(root: str, path: str) -> str | None:
    """CC-17: the first level from below `root` down to `path` that is a symlink, if any."""
    current = root
    for part in os.path.relpath(path, root).split(os.sep):
        current = os.path.join(current, part)
        if os.path.islink(current):
            return current
        if not os.path.isdir(current):
            return None
    return None
