"""IMPL-4: upstream TorchAir's Python sources, taken from the torch-npu wheel itself into a cache outside the
repository.

At first use ``pip download --no-deps torch-npu==$TORCH_NPU_VERSION`` (default 2.14.0) fetches the wheel; only
``torch_npu/dynamo/torchair/**.py`` and ``torch_npu/version.py`` are extracted, into a temporary directory that is
renamed into place, so a reader never sees a half-extracted tree. Nothing native is extracted and the wheel is never
installed (IMPL-3).

Cache folder: ``$TORCHAIR_CPU_CACHE`` if set, else ``$XDG_CACHE_HOME/torchair-conformance``, else
``~/.cache/torchair-conformance``; inside it ``torch_npu-<version>/`` holds ``torchair/`` and ``version.py``.
"""

from __future__ import annotations

import compileall
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath

__all__ = ["VERSION_ENV", "CACHE_ENV", "DEFAULT_VERSION", "WheelError", "requested_version", "cache_root",
           "source_members", "extract", "download", "ensure", "wheel_version"]

logger = logging.getLogger("torchair_cpu")

VERSION_ENV = "TORCH_NPU_VERSION"
CACHE_ENV = "TORCHAIR_CPU_CACHE"
DEFAULT_VERSION = "2.14.0"
_PREFIX = "torch_npu/dynamo/torchair/"
_VERSION_FILE = "torch_npu/version.py"
_DONE = ".complete"


class WheelError(RuntimeError):
    """The torch-npu wheel could not be fetched or does not hold TorchAir's sources."""


def requested_version(environ: Mapping[str, str] | None = None) -> str:
    """The torch-npu release under test: ``$TORCH_NPU_VERSION``, else 2.14.0."""
    environ = os.environ if environ is None else environ
    return environ.get(VERSION_ENV) or DEFAULT_VERSION


def cache_root(environ: Mapping[str, str] | None = None) -> Path:
    """Where extracted sources live: ``$TORCHAIR_CPU_CACHE``, else ``$XDG_CACHE_HOME`` or ``~/.cache``, plus
    ``torchair-conformance``."""
    environ = os.environ if environ is None else environ
    if environ.get(CACHE_ENV):
        return Path(environ[CACHE_ENV]).expanduser().resolve()
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return (Path(base) / "torchair-conformance").resolve()


def source_members(names: Iterable[str]) -> list[str]:
    """The wheel entries to extract: TorchAir's ``.py`` files and ``torch_npu/version.py``, nothing that escapes."""
    chosen = []
    for name in names:
        parts = PurePosixPath(name).parts
        if ".." in parts or name.startswith("/"):
            continue
        if name == _VERSION_FILE or (name.startswith(_PREFIX) and name.endswith(".py")):
            chosen.append(name)
    return chosen


def extract(wheel: Path, target: Path) -> Path:
    """Extract the sources of ``wheel`` into ``target`` atomically (a sibling temporary directory, then a rename).

    ``target`` gets ``torchair/`` (the package) and ``version.py``; an existing complete ``target`` is kept."""
    if (target / _DONE).is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        with zipfile.ZipFile(wheel) as archive:
            members = source_members(archive.namelist())
            if not any(m.startswith(_PREFIX) for m in members):
                raise WheelError(f"{wheel} holds no {_PREFIX}*.py: not a torch-npu wheel with TorchAir inside")
            for name in members:
                dest = staging / ("version.py" if name == _VERSION_FILE else "torchair/" + name[len(_PREFIX):])
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(archive.read(name))
        # Bytecode beside the sources, as pip writes at install: every upstream process (the suite starts many)
        # then skips compiling ~1000 modules, also where PYTHONDONTWRITEBYTECODE is set. Named as the final path.
        compileall.compile_dir(str(staging / "torchair"), ddir=str(target / "torchair"), quiet=2, workers=1)
        (staging / _DONE).write_text(wheel.name + "\n", encoding="utf-8")
        try:
            os.rename(staging, target)
        except OSError:
            # Another process renamed its copy first: use that one.
            if not (target / _DONE).is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def download(version: str, dest: Path) -> Path:
    """``pip download --no-deps torch-npu==version`` into ``dest``; the wheel's path."""
    dest.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               f"torch-npu=={version}", "-d", str(dest)]
    logger.info("fetching torch-npu %s: %s", version, " ".join(command))
    proc = subprocess.run(command, capture_output=True, text=True)
    wheels = sorted(dest.glob(f"torch_npu-{version}-*.whl"))
    if proc.returncode != 0 or not wheels:
        raise WheelError(
            f"could not download torch-npu=={version} ({' '.join(command)} exited {proc.returncode}):\n"
            f"{proc.stderr[-2000:]}\nset ${VERSION_ENV} to a released version, or check the network/pip index")
    return wheels[0]


def ensure(version: str | None = None, root: Path | None = None) -> Path:
    """IMPL-4: the directory holding ``torchair/`` from torch-npu ``version``, fetching and extracting it once."""
    version = version or requested_version()
    root = root or cache_root()
    target = root / f"torch_npu-{version}"
    if (target / _DONE).is_file():
        return target
    with tempfile.TemporaryDirectory(prefix="torch-npu-wheel-", dir=str(root) if root.is_dir() else None) as tmp:
        return extract(download(version, Path(tmp)), target)


def wheel_version(target: Path) -> str | None:
    """The ``__version__`` written in the extracted ``version.py`` (read as text, never imported)."""
    path = target / "version.py"
    if not path.is_file():
        return None
    for line in path.read_text(encoding="utf-8").splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() == "__version__":
            return value.strip().strip("'\"")
    return None
