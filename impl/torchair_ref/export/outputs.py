"""Writing the exporter's outputs all or nothing (EX-2, EX-3, EX-6): never through a symlink, never half a file.

``write_all`` first writes every output, mode 0644 (less the umask), to a temporary file beside its target
(``torchair_ref._files.stage``: same folder, so the rename is atomic) and only when all of them are complete renames
them over their targets, in order; the last output (the ``.air``, which names the others) is removed first and
renamed last. So a failure at any point (a full disk, a file size
limit, a read-only folder, a kill) leaves either the previous export untouched (while writing) or no ``.air`` at all
(while renaming): never an ``.air`` beside half-written weight files, or weight files of two exports.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable, Sequence

from torchair_ref import _files

#: an output's content, or a function that makes it (so that only one weight's bytes are in memory at a time)
Content = bytes | Callable[[], bytes]


def write_all(outputs: Sequence[tuple[str, Content]]) -> None:
    """Write ``(path, content)`` outputs all or nothing, the last one last; an OSError names the target it hit."""
    for path, _ in outputs:
        if os.path.isdir(path) and not os.path.islink(path):
            raise IsADirectoryError(errno.EISDIR, f"dynamo_export: {path} is a directory; remove it to export here")
    pending: list[tuple[str, str]] = []  # (temporary file, target), not renamed yet
    target = ""
    try:
        for target, content in outputs:
            data = content() if callable(content) else content
            pending.append((_files.stage(target, data, mode=0o644), target))
        target = outputs[-1][0]
        with contextlib.suppress(FileNotFoundError):
            os.unlink(target)
        while pending:
            temporary, target = pending[0]
            os.replace(temporary, target)
            pending.pop(0)
    except OSError as exc:
        if exc.errno is None:
            raise
        raise OSError(exc.errno, f"dynamo_export could not write {target}: {exc.strerror or exc}") from exc
    finally:
        for temporary, _ in pending:
            with contextlib.suppress(OSError):
                os.unlink(temporary)

