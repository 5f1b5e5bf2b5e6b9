"""The report's output folder: it replaces only files it wrote itself, listed in a manifest (`MANIFEST`).

`python -m torchair_conformance report --out DIR` must never overwrite a file it did not write (`--out .` in the
repository root would replace the project's README.md) nor delete one (other `charts/*.png` in DIR). So every render
records the files it wrote in `DIR/.report-manifest.json`; the next render may replace or delete exactly those. A folder
with no manifest is taken only while it holds no file at its top level (new, empty, or only sub-folders such as a
history); a rendered file whose name is taken by a file not in the manifest stops the publication before anything is
moved.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from torchair_conformance.errors import ConformanceError

MANIFEST = ".report-manifest.json"


class OutDirError(ConformanceError):
    """The output folder cannot take the report; the message names the folder or file and the fix."""


def check(out: str | os.PathLike) -> str | None:
    """Why `out` cannot take the report (before anything is rendered), else None."""
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        return f"--out {str(out)!r} is a file, not a folder"
    if not folder.exists():
        parent = folder.absolute().parent
        while not parent.exists():
            parent = parent.parent
        if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
            return f"--out {str(out)!r} cannot be created ({parent} is not a writable folder)"
        return None
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"--out {str(out)!r} is not writable"
    if (folder / MANIFEST).exists():
        try:
            read_manifest(folder)
        except OutDirError as exc:
            return str(exc)
        return None
    foreign = sorted(p.name for p in folder.iterdir() if not p.is_dir())
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        return (f"--out {str(out)!r} holds files the report did not write ({shown}) and no {MANIFEST}: the report "
                f"would replace them; pass a new or empty folder, or one the report rendered before")
    return None


def read_manifest(out: Path) -> set[str]:
    """The files (relative POSIX paths) that the last render wrote in `out`; empty without a manifest."""
    path = out / MANIFEST
    if not path.exists():
        return set()
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise OutDirError(f"{path}: not a report manifest ({exc}); delete it only if every file it listed is the "
                          f"report's own") from exc
    # An entry that leaves the folder is never the report's own: it is ignored rather than deleted.
    return {e for e in entries if isinstance(e, str) and _inside(e)}


def _inside(relative: str) -> bool:
    path = PurePosixPath(relative)
    return bool(relative) and not path.is_absolute() and ".." not in path.parts


@contextmanager
def staging(out: str | os.PathLike) -> Iterator[Path]:
    """A fresh hidden folder inside `out` (created) to render into; removed afterwards."""
    Path(out).mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=".report-staging-", dir=out))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def publish(staged: Path, out: str | os.PathLike) -> list[Path]:
    """Move every file rendered in `staged` into `out`, delete what the previous render wrote and this one did not,
    and record the new set in the manifest; `OutDirError` (nothing moved) when a name is taken by a foreign file."""
    folder = Path(out)
    previous = read_manifest(folder)
    rendered = sorted(p.relative_to(staged).as_posix() for p in staged.rglob("*") if p.is_file())
    taken = [name for name in rendered if name not in previous and (folder / name).exists()]
    if taken:
        raise OutDirError(f"{', '.join(str(folder / name) for name in taken)}: not written by the report (not in "
                          f"{folder / MANIFEST}); it is left as it was: move it away or pass another --out")
    written = []
    for name in rendered:
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staged / name, target)
        written.append(target)
    for name in sorted(previous - set(rendered)):
        stale = folder / name
        if stale.is_file() and not stale.is_symlink():
            stale.unlink()
    manifest = folder / MANIFEST
    manifest.with_suffix(".tmp").write_text(json.dumps({"files": rendered}, indent=1) + "\n", encoding="utf-8")
    os.replace(manifest.with_suffix(".tmp"), manifest)
    return written
