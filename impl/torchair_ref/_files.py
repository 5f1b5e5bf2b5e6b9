"""The file layer under `inference`, `compilers` and `export` (SPEC CC-11, CC-17, EX-2, EX-3, EX-6).

- **Checked reads** (`read_checked`): a file is opened with `O_NOFOLLOW | O_NONBLOCK` (a symlink is refused, a FIFO
  never waited on), `fstat`ed and checked on that descriptor (owner and mode: `check_owned_private`,
  `check_owned_unshared`), its size compared with a bound before anything is read, and read from that descriptor
  alone, never by its path again. Every refusal is a `BrokenCacheError` naming the file.
- **Private folders** (`make_private_levels`, `unsafe_level`, `damaged_level`, `symlink_below`): every level from a
  root down to a folder must be a real directory of the current user that no one else can write in; the writer
  creates the missing ones with mode 0700 and checks each one before going into it.
- **Atomic writes** (`atomic_write`, and `stage` for a caller that renames several files together): the content goes
  to a new temporary file beside its target (same folder, so the rename is atomic; `O_EXCL | O_NOFOLLOW`, so never
  through a symlink), created with the caller's mode, flushed to disk and only then renamed over the target, so a
  killed writer never leaves a file that loads, and of two writers racing the last rename wins with a whole file.
  `atomic_write` holds an flock on its temporary file until the rename; the next write of the same target removes
  the temporary files whose lock is free, i.e. those of writers that were killed.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import shutil
import stat
from collections.abc import Callable

from torchair_ref.errors import BrokenCacheError

_TEMP_SUFFIX = ".tmp"
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def read_checked(
    path: str, *, what: str, limit: int, check: Callable[[str, os.stat_result], None] | None = None,
) -> bytes:
    """CC-17: the bytes of `path`, read from one descriptor that was checked, never by the path again.

    `check` (by default `check_owned_private`) sees the descriptor's `fstat`; a file over `limit` bytes is refused
    before anything is read, and at most `limit` bytes are read. Every failure is a `BrokenCacheError` naming the
    file as `what`; a missing file is one whose `__cause__` is a `FileNotFoundError`.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC)
    except OSError as exc:
        if os.path.islink(path):
            raise BrokenCacheError(f"{what} {path} is a symlink") from exc
        raise BrokenCacheError(f"{what} {path} cannot be opened: {exc}") from exc
    try:
        info = os.fstat(fd)
        (check or check_owned_private)(path, info)
        if info.st_size > limit:
            raise BrokenCacheError(
                f"{what} {path} has {info.st_size} bytes, more than the {limit} a torchair_ref {what} may have"
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
    _check_owned_regular(path, info)
    mode = stat.S_IMODE(info.st_mode)
    if mode != 0o600:
        raise BrokenCacheError(f"{path} has mode {mode:04o}; a cache file must have mode 0600")


def check_owned_unshared(path: str, info: os.stat_result) -> None:
    """CC-17: a regular file, owned by the current user, writable by no one else (a file of Inductor's own cache)."""
    _check_owned_regular(path, info)
    if info.st_mode & 0o022:
        raise BrokenCacheError(f"{path} has mode {stat.S_IMODE(info.st_mode):04o}: writable by group or others")


def _check_owned_regular(path: str, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise BrokenCacheError(f"{path} is not a regular file")
    if info.st_uid != os.geteuid():
        raise BrokenCacheError(f"{path} is owned by uid {info.st_uid}, not by the current user (uid {os.geteuid()})")


def _folder_problem(path: str, info: os.stat_result) -> str | None:
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


def _levels(root: str, folder: str) -> list[str]:
    """The root and each folder below it down to `folder` (which must be below `root`), in order."""
    levels = [root]
    for part in os.path.relpath(folder, root).split(os.sep):
        if part != os.curdir:
            levels.append(os.path.join(levels[-1], part))
    return levels


def unsafe_level(root: str, folder: str) -> str | None:
    """CC-17: the reason the first existing level from `root` down to `folder` cannot be trusted, or None."""
    for level in _levels(root, folder):
        try:
            info = os.lstat(level)
        except FileNotFoundError:
            return None
        problem = _folder_problem(level, info)
        if problem is not None:
            return problem
    return None


def damaged_level(root: str, folder: str) -> str | None:
    """CC-17: the first level below `root` down to `folder` that is a file, FIFO, socket or device of ours where a
    folder should be (damage: the caller may remove it), if every level above it is a trusted folder; else None."""
    for level in _levels(root, folder):
        try:
            info = os.lstat(level)
        except FileNotFoundError:
            return None
        if _folder_problem(level, info) is None:
            continue
        mine = info.st_uid == os.geteuid() and not stat.S_ISLNK(info.st_mode) and not stat.S_ISDIR(info.st_mode)
        return level if mine and level != root else None
    return None


def repair_levels(root: str, path: str, folder: str) -> list[str]:
    """CC-17: remove what stands where a level of ours goes below `root`, on the way to the file `path` and to
    `folder` beside it: a symlink (the link itself, never what it points to), a file, FIFO, socket or device of ours
    where a folder goes (with `path`'s folder); what was removed, in words, for the warnings."""
    removed = []
    link = symlink_below(root, path)
    if link is not None:
        removed.append(f"{link} is a symlink; the levels below the cache root are never followed")
        with contextlib.suppress(OSError):
            os.unlink(link)
    damaged = damaged_level(root, folder)
    if damaged is not None:
        removed.append(f"{damaged} is not a directory")
        with contextlib.suppress(OSError):
            os.unlink(damaged)  # a file of ours in a folder of ours (never waited on, never followed)
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)
    return removed


def make_private_levels(root: str, folder: str) -> None:
    """CC-11/CC-17: create the missing levels from `root` down to `folder`, each mode 0700, checking each one (made
    now or not) before going into it: `OSError` naming the level and the fix when one is not ours or writable by
    others."""
    parent = os.path.dirname(root)
    if parent and not os.path.isdir(parent):
        os.makedirs(parent, exist_ok=True)  # the caller's folders above the root
    for level in _levels(root, folder):
        with contextlib.suppress(FileExistsError):
            os.mkdir(level, 0o700)
        problem = _folder_problem(level, os.lstat(level))
        if problem is not None:  # checked before anything is made inside it
            raise OSError(f"the cache folder cannot be trusted: {problem}")


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


def atomic_write(path: str, data: bytes, *, mode: int) -> None:
    """CC-11: write `data` to `path` through a temporary file of `mode` in the same folder (made 0700 if missing),
    fsync and a rename; first removes the temporary files of killed writers of `path`."""
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    _remove_stale_temps(folder, _temp_prefix(path))
    fd, tmp = _written_temp(path, data, mode)
    try:
        os.replace(tmp, path)  # still holding the lock, so the complete temp file is never taken for a dead one
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    finally:
        os.close(fd)
    dir_fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def stage(target: str, data: bytes, *, mode: int) -> str:
    """EX-2: write `data` to a new temporary file of `mode` beside `target`, flushed to disk, and return its path:
    the caller renames it over `target` (or removes it). Its lock is released on return, so it must be renamed
    before anyone calls `atomic_write` on the same target."""
    fd, tmp = _written_temp(target, data, mode)
    os.close(fd)
    return tmp


def _temp_prefix(target: str) -> str:
    return "." + os.path.basename(target) + "."


def _written_temp(target: str, data: bytes, mode: int) -> tuple[int, str]:
    """A new temporary file beside `target` holding `data` on disk, and its descriptor, still flock'ed."""
    fd, tmp = _locked_temp(target, mode)
    try:
        with os.fdopen(fd, "wb", closefd=False) as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return fd, tmp


def _locked_temp(target: str, mode: int) -> tuple[int, str]:
    """A new temporary file, exclusively flock'ed for as long as it is open: the lock marks its writer as alive."""
    folder = os.path.dirname(target)
    while True:
        tmp = os.path.join(folder, f"{_temp_prefix(target)}{secrets.token_hex(6)}{_TEMP_SUFFIX}")
        try:
            fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC, mode)
        except FileExistsError:
            continue
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(tmp))
        except FileNotFoundError:
            same = False
        if same:
            return fd, tmp
        # Another writer took it for a dead one's between open and flock, and removed it: take a new one.
        os.close(fd)


def _remove_stale_temps(folder: str, prefix: str) -> None:
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
