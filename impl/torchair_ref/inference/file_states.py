"""A traced file known to hold the bytes the cold process read, by its status alone (SPEC CC-14).

The cold process reads each traced file once, to record the bytes of the lines Dynamo traced, and records with them
the file's status as `fstat` gave it on that descriptor before the read (`state`): device, inode, size, and the
modification and change times in nanoseconds. A warm start whose `stat` of the file gives the same five numbers
(`unchanged`) knows the file was not written since (a write moves its change time to the clock's present, which no
call can set back; a file replaced by a rename has another inode), and skips reading and hashing its spans; any
other status, or none recorded, and the spans are read and compared as before (`record.changed_sources`). This is
the check `git` makes of its index and Python of a `.pyc`'s source, with the change time and inode added.

A timestamp has the clock's granularity (a tick of milliseconds on Linux, two seconds on FAT), so a file changed
within a tick of the read could change again, to bytes of the same size, under the same timestamps. A file is
therefore given no state when its modification or change time is less than `RACY_NS` before the read, or after it
(a clock set back): `git`'s "racily clean" rule. Such a file is read at every warm start.
"""
from __future__ import annotations

import os
import time
from typing import Any

#: how long before the cold process's read a file must have last changed to be given a state
RACY_NS = 3_000_000_000


def state(status: os.stat_result, now_ns: int | None = None) -> list[int] | None:
    """The status to record for a file whose bytes are read after `status` was taken, or None when it changed less
    than `RACY_NS` before `now_ns` (the present by default) or after it."""
    now_ns = time.time_ns() if now_ns is None else now_ns
    if now_ns - max(status.st_mtime_ns, status.st_ctime_ns) < RACY_NS:
        return None
    return _key(status)


def unchanged(recorded: Any) -> frozenset[str]:
    """The files among `recorded` (a record's `{path: state}`) whose status now is the recorded one; a value that is
    not such a mapping names none (its files are then read)."""
    if not isinstance(recorded, dict):
        return frozenset()
    same = []
    for path, known in recorded.items():
        if type(path) is str and type(known) is list and len(known) == 5:
            try:
                status = os.stat(path)
            except (OSError, ValueError):  # gone, or a path no stat takes (a NUL byte)
                continue
            if _key(status) == known:
                same.append(path)
    return frozenset(same)


def _key(status: os.stat_result) -> list[int]:
    return [status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns]
