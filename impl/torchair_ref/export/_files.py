"""File writing shared by the exporter's outputs: never through a symlink."""

from __future__ import annotations

import os


def write_file(path: str, data: bytes) -> None:
    """Create or truncate ``path`` and write ``data``; a symlink at ``path`` raises instead of being followed."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
