"""Helpers of the reliability tests: the fault program, immutable files, cache-state assertions and a canary.

Assertion messages carry the values that broke them (file listings, reports, stderr tails).
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
from torch._dynamo.utils import counters

import torchair_ref
from tests.conftest import PROGRAMS
from tests.reference.export.checks import child_env
from torchair_ref.inference import artifact, cache_compile

FAULT_PROGRAM = PROGRAMS / "fault_run.py"
TEMP_SUFFIX = ".tmp"


def eager_config() -> torchair_ref.CompilerConfig:
    config = torchair_ref.CompilerConfig()
    config.debug.run_eagerly = True
    return config


class Net(torch.nn.Module):
    """Two layers and a buffer: small, and every input role (parameter, buffer, user input) is in its graph."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.fc1 = torch.nn.Linear(4, 8)
        self.fc2 = torch.nn.Linear(8, 4)
        self.register_buffer("shift", torch.linspace(-1, 1, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x))) + self.shift


def start_fault_program(job: dict[str, Any], cwd: Path) -> subprocess.Popen:
    """tests/programs/fault_run.py on `job`, started (stdout and stderr to files beside the job, never pipes)."""
    cwd.mkdir(parents=True, exist_ok=True)
    out = tempfile.TemporaryFile("w+")
    proc = subprocess.Popen([sys.executable, str(FAULT_PROGRAM), json.dumps(job)], cwd=cwd, env=child_env(),
                            stdout=out, stderr=subprocess.STDOUT, text=True)
    proc.output_file = out  # type: ignore[attr-defined]
    return proc


def finish(proc: subprocess.Popen, *, timeout: float = 600, killed: bool = False) -> dict[str, Any]:
    """Wait for a started fault program; its report, or (killed=True) assert it died of SIGKILL."""
    try:
        code = proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    handle = proc.output_file  # type: ignore[attr-defined]
    handle.seek(0)
    output = handle.read()
    handle.close()
    if killed:
        assert code == -signal.SIGKILL, (
            f"expected the program to be SIGKILLed by its fault, it exited {code} (is the fault step still reached? "
            f"see tests/programs/fault_run.py)\n{output[-3000:]}")
        return {}
    reports = [line for line in output.splitlines() if line.startswith("REPORT ")]
    assert code == 0 and reports, f"fault_run.py exited {code}\n{output[-5000:]}"
    return json.loads(reports[-1][len("REPORT "):])


def run_fault_program(job: dict[str, Any], cwd: Path, **kwargs: Any) -> dict[str, Any]:
    return finish(start_fault_program(job, cwd), **kwargs)


def cache_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("compiled_module")) if root.exists() else []


def temp_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*" + TEMP_SUFFIX)) if root.exists() else []


def listing(root: Path) -> dict[str, str]:
    """Every entry below `root`: relative path -> kind, size and mode (to show what a fault left)."""
    found = {}
    for parent, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(parent, name)
            info = os.lstat(path)
            kind = "link" if stat.S_ISLNK(info.st_mode) else "dir" if stat.S_ISDIR(info.st_mode) else "file"
            found[os.path.relpath(path, root)] = f"{kind} {info.st_size}B {stat.S_IMODE(info.st_mode):04o}"
    return found


def assert_one_valid_cache(root: Path) -> Path:
    """CC-11: exactly one compiled_module under `root`, whole (it decodes), mode 0600, and no temporary file."""
    files = cache_files(root)
    assert len(files) == 1, f"expected one compiled_module under {root}, found {listing(root)}"
    artifact.read(str(files[0]))
    mode = stat.S_IMODE(files[0].stat().st_mode)
    assert mode == 0o600, f"{files[0]} has mode {mode:04o}"
    assert not temp_files(root), f"temporary files left under {root}: {listing(root)}"
    return files[0]


def snapshot(root: Path) -> dict[str, tuple]:
    """Bytes, mode and owner of every file below `root` (links by their target): to prove nothing was touched."""
    found = {}
    for parent, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(parent, name)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                found[path] = ("link", os.readlink(path))
            elif stat.S_ISREG(info.st_mode):
                found[path] = ("file", Path(path).read_bytes(), stat.S_IMODE(info.st_mode), info.st_uid)
            else:
                found[path] = ("dir", stat.S_IMODE(info.st_mode), info.st_uid)
    return found


class Trap:
    """Unpickling this creates `path`: the canary that proves untrusted code ran."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def chattr(path: Path, flag: str) -> subprocess.CompletedProcess:
    return subprocess.run(["chattr", flag, str(path)], capture_output=True, text=True)


@contextlib.contextmanager
def immutable(*paths: Path) -> Iterator[None]:
    """Make `paths` read-only even for root; skip where the platform cannot.

    Root bypasses permission bits, so a folder without write bits is no fault for root; the immutable attribute
    (chattr +i) is, and needs CAP_LINUX_IMMUTABLE and a file system that has it (ext2/3/4, xfs, btrfs; not tmpfs).
    Other users get the write bits removed instead.
    """
    if os.geteuid() != 0:
        modes = {path: stat.S_IMODE(path.stat().st_mode) for path in paths}
        try:
            for path, mode in modes.items():
                path.chmod(mode & ~0o222)
            yield
        finally:
            for path, mode in modes.items():
                path.chmod(mode)
        return
    if shutil.which("chattr") is None:
        pytest.skip("chattr is not installed: a read-only folder cannot be made for root here")
    done = []
    try:
        for path in paths:
            result = chattr(path, "+i")
            if result.returncode != 0:
                pytest.skip(f"chattr +i {path} failed ({result.stderr.strip()}): needs CAP_LINUX_IMMUTABLE and a "
                            "file system with the immutable attribute")
            done.append(path)
        yield
    finally:
        for path in done:
            chattr(path, "-i")


def budget(cost: str) -> int:
    """Examples for a property of this cost ("cheap", "compile", "process") under $HYPOTHESIS_PROFILE, from the
    conformance suite's profiles (`ci` unless set; `nightly` for long runs)."""
    from torchair_conformance import profiles

    return profiles.PROFILES[os.environ.get("HYPOTHESIS_PROFILE") or profiles.DEFAULT].budgets[cost]


@contextlib.contextmanager
def no_hang(seconds: int = 20) -> Iterator[None]:
    """Fail the test if the block blocks for `seconds` (a FIFO opened for reading waits for a writer forever).

    The alarm interrupts the blocked call with TimeoutError; the code under test may catch that, so the test fails
    on the alarm having fired, whatever the block did with it.
    """
    fired = []

    def expire(signum: int, frame: Any) -> None:
        fired.append(seconds)
        raise TimeoutError(f"still blocked after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        assert not fired, f"blocked for {seconds} s (interrupted)"


X = torch.linspace(-2, 2, 12).reshape(3, 4)


@dataclass
class Case:
    """One damaged cache: its root, the file, the valid bytes it had, and a folder outside the root."""

    root: Path
    path: Path
    valid: bytes
    outside: Path


def cold(base: Path) -> Case:
    """A valid cache of Net.forward under `base/cache` (eager, in this process), and a folder beside it."""
    root = base / "cache"
    cached = cache_compile(Net().forward, config=eager_config(), cache_dir=str(root))
    cached(X)
    path = Path(cached.cache_file)
    outside = base / "outside"
    outside.mkdir()
    (outside / "precious").write_text("not the cache's to touch")
    return Case(root, path, path.read_bytes(), outside)


def reseal(data: bytes, change: Callable[[dict], None]) -> bytes:
    """The payload changed by `change`, with a matching header and checksum (a valid file from elsewhere)."""
    payload = artifact.decode(data)
    change(payload)
    return artifact.encode(payload)


def call_again(case: Case) -> tuple[torch.Tensor, list[str], int, str]:
    """A fresh model's first call on the damaged root: output, warnings, graphs traced, the cache path it used."""
    before = counters["stats"]["unique_graphs"]
    cached = cache_compile(Net().forward, config=eager_config(), cache_dir=str(case.root))
    with pytest.warns(UserWarning) as caught, no_hang():
        out = cached(X)
    return out, [str(w.message) for w in caught], counters["stats"]["unique_graphs"] - before, cached.cache_file


HOSTILE_C = """
#include <stdio.h>
__attribute__((constructor)) static void hostile(void) {
    FILE *f = fopen(%s, "w");
    if (f) fclose(f);
}
"""


def hostile_shared_object(folder: Path, canary: Path) -> Path:
    """A shared object whose constructor writes `canary` (shown live here, then the canary removed); skips without
    a C compiler."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build the hostile shared object (Inductor needs one too)")
    source = folder / "hostile.c"
    source.write_text(HOSTILE_C % ('"' + str(canary).replace("\\", "\\\\").replace('"', '\\"') + '"'))
    hostile = folder / "hostile.so"
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(hostile), str(source)], check=True)
    import ctypes

    ctypes.CDLL(str(shutil.copy(hostile, folder / "probe.so")))  # the canary is live
    assert canary.exists(), "the hostile shared object does not write the canary"
    canary.unlink()
    return hostile
