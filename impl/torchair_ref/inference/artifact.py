"""The on-disk cache format (SPEC CC-11, CC-14, CC-17, RC-1).

A `compiled_module` file is, in order:

1. the magic line `TORCHAIR_REF_CACHE\\n`;
2. a header line, JSON: `{"format": 1, "payload_bytes": N, "payload_sha256": "<hex>"}`;
3. the payload: N bytes of UTF-8 JSON (see `cached.py` for its keys: the function, Dynamo's bytecode, the graph
   record, the environment fingerprint).

Nothing in it is unpickled: JSON, base64 `marshal` data for the bytecode, and names of importable objects. Files
the graph record refers to (kept kernels, `ge_cache=True`) live in `<func>/kernels/`, named by their SHA-256, which
the record also holds. Every file is written by `torchair_ref._files.atomic_write` with mode 0600 (a temporary
file beside it, fsync, rename: a killed writer never leaves a file that loads) and read by `_files.read_checked`:
a symlink, anything but a regular file (a FIFO without waiting on it), a file owned by someone else, a mode other
than 0600 and a file over `MAX_FILE_BYTES` (seen by `fstat` before anything is read) are refused as
`BrokenCacheError`, and so are a bad magic, header (deeply nested JSON included), length or checksum here; another
format version is a `StaleCacheError`. The cache root and every folder below it must be directories of the current
user that no one else can write in (`_files.unsafe_level`); the writer creates them with mode 0700.
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
import sys
from typing import Any

import torch

from torchair_ref import _files
from torchair_ref.errors import BrokenCacheError, StaleCacheError

MAGIC = b"TORCHAIR_REF_CACHE\n"
FORMAT_VERSION = 1
_MAX_HEADER_BYTES = 4096
#: the largest cache or kernel file read (checked with fstat before reading; read at most this many bytes)
MAX_FILE_BYTES = 1 << 30
KERNEL_DIR = "kernels"
_KERNEL_FILE = re.compile(r"^[0-9a-f]{40}\.so$")


def environment(device: str) -> dict[str, Any]:
    """The environment fingerprint: a cache written under another one is stale.

    Besides versions it holds torch's git revision (two builds of one version differ), this package's version, and
    the CPU's feature flags: Inductor compiles C++ kernels for the host CPU (`-march=native`), so a kernel is only
    kept for a CPU with the same extensions, not merely the same ATen capability.
    """
    from torchair_ref._version import __version__

    npu = sys.modules.get("torch_npu")
    return {
        "python": platform.python_version(),
        "bytecode_magic": importlib.util.MAGIC_NUMBER.hex(),
        "torch": str(torch.__version__),  # a str: torch's own compares by parsing both (0.2-0.5 ms the first time)
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
    return decode(_files.read_checked(path, what="cache file", limit=MAX_FILE_BYTES), f"cache file {path}")


def write(path: str, payload: dict[str, Any], files: dict[str, bytes] | None = None,
          keep: set[str] | frozenset[str] = frozenset()) -> bool:
    """CC-11: write the cache atomically with mode 0600 (kernel files first, the `compiled_module` last); False when
    another process is saving this very `<func>` folder right now, which then leaves its save alone.

    One writer of a `<func>` folder at a time (an flock on the folder), so that `kernels/` then holds exactly the
    kernels the written record names: each save removes the others' (a racing cold process with an Inductor cache of
    its own built other ones) but those in `keep` (the kernels of the other variants it writes, CC-23), and a save
    that fails (no room) removes the kernel files it added. A process that finds
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
                _files.atomic_write(os.path.join(kernels, name), data, mode=0o600)
            _files.atomic_write(path, encode(payload), mode=0o600)
        except BaseException:
            for name in added:
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(kernels, name))
            raise
        _remove_kernels_except(kernels, names | set(keep))
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
