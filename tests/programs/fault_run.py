"""A fresh process for the reliability tests: cache_run.py's models and inputs, with one fault injected.

Usage: python fault_run.py '<job JSON>'. Job keys, besides cache_run.py's (model, seed, calls, run_eagerly, mode,
dynamic, ge_cache):

- ``cache_dirs``: run the calls once per directory, each time on a freshly built model (``passes`` times over the
  list; the second pass shows whether what the first left loads); default: one run on the cwd's default root.
- ``kill_at``: SIGKILL this process at that step of writing a ``compiled_module`` (``STEPS``).
- ``pause_at`` (a list of steps), ``signals`` (a folder): at each step create ``<signals>/<step>.paused``, then wait
  until ``<signals>/<step>.go`` exists.
- ``fsize``: RLIMIT_FSIZE in bytes around the calls (CPython ignores SIGXFSZ: writes fail with EFBIG).
- ``export``: instead of caching, ``dynamo_export`` tests.reference.export.models.TwoLayer to this directory, every
weight
  in a file.

Prints one line ``REPORT {json}``: per run, the output digests, the largest absolute difference from the plain
(uncompiled) method on the same inputs, the graphs Dynamo traced, the warnings and the torchair_ref log lines; for an
export, the error it raised (type and message) or null.

The fault comes from outside the library: the reference that ``torchair_ref._files`` (which writes every cache file)
holds to the ``os`` module is replaced by a proxy that acts at the chosen step. The library has no test hooks.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import resource
import signal
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import torch

import torchair_ref
from tests.programs.cache_run import SeedModel, build, digest
from torchair_conformance import process
from torchair_conformance.models import InputMeta
from torchair_ref import _files

STEPS = ("before_temp", "temp_created", "mid_write", "before_rename", "after_rename")
TARGET = "compiled_module"


class _Proxy:
    """A module stand-in: the given attributes replaced, every other one read from the real module."""

    def __init__(self, real: Any, **overrides: Any) -> None:
        self._real = real
        self.__dict__.update(overrides)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


class _HalfThenAct:
    """A file object whose first write stops halfway, flushed to disk, to let the fault act."""

    def __init__(self, handle: Any, act: Callable[[], None]) -> None:
        self._handle = handle
        self._act = act

    def write(self, data: bytes) -> int:
        half = len(data) // 2
        self._handle.write(data[:half])
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self._act()
        return half + self._handle.write(data[half:])

    def __enter__(self) -> _HalfThenAct:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._handle.__exit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)


def install_fault(step: str, act: Callable[[], None]) -> None:
    """Make `act` run at `step` of writing a compiled_module (and only that file, not kernels or other outputs)."""
    if step not in STEPS:
        raise SystemExit(f"unknown step {step!r}; known: {STEPS}")
    real_os = _files.os
    ours: set[int] = set()

    def open_(path: str, flags: int, *args: Any, **kwargs: Any) -> int:
        mine = os.path.basename(path).startswith(f".{TARGET}.") and bool(flags & os.O_CREAT)
        if mine and step == "before_temp":
            act()
        fd = real_os.open(path, flags, *args, **kwargs)
        if mine:
            ours.add(fd)
            if step == "temp_created":
                act()
        return fd

    def fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:
        handle = real_os.fdopen(fd, *args, **kwargs)
        return _HalfThenAct(handle, act) if fd in ours and step == "mid_write" else handle

    def replace(src: str, dst: str) -> None:
        mine = os.path.basename(dst) == TARGET
        if mine and step == "before_rename":
            act()
        real_os.replace(src, dst)
        if mine and step == "after_rename":
            act()

    _files.os = _Proxy(real_os, open=open_, fdopen=fdopen, replace=replace)


def kill() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def pause(ready: str, go: str) -> Callable[[], None]:
    def act() -> None:
        with open(ready, "w"):
            pass
        deadline = time.monotonic() + 300
        while not os.path.exists(go):
            if time.monotonic() > deadline:
                raise SystemExit(f"nobody created {go} within 300 s")
            time.sleep(0.01)

    return act


def inputs(model: torch.nn.Module, spec: dict, seed: int) -> tuple[tuple, dict]:
    """The arguments cache_run.call passes for `spec` (the same generator draws)."""
    generator = torch.Generator().manual_seed(seed + spec.get("batch", 2))
    batch = spec.get("batch", 2)
    if isinstance(model, SeedModel):
        x = InputMeta(torch.randn(batch, 2, generator=generator), spec["method"] == "prompt")
        return (x, [torch.randn(batch, 2, generator=generator)]), {}
    return (torch.randn(batch, 16, generator=generator),), {"steps": spec.get("steps", 1)}


def run_once(job: dict, cache_dir: str | None) -> dict:
    before = process.traced()["unique_graphs"]
    model, _ = build({**job, "cache_dir": cache_dir})
    outputs, diffs = [], []
    for spec in job.get("calls", [{"method": "prompt"}]):
        args, kwargs = inputs(model, spec, job.get("seed", 0))
        if isinstance(model, SeedModel):
            cached, plain = (model.cached_prompt, model.prompt) if spec["method"] == "prompt" else (
                model.cached_decode, model.decode)
        else:
            cached, plain = model.cached, model.run
        out = cached(*args, **kwargs)
        with torch.no_grad():
            expected = plain(*args, **kwargs)
        outputs.append(digest(out))
        diffs.append(max_diff(out, expected))
    return {"outputs": outputs, "max_diff": max(diffs), "unique_graphs": process.traced()["unique_graphs"] - before}


def max_diff(out: Any, expected: Any) -> float:
    if isinstance(out, torch.Tensor):
        if out.shape != expected.shape or out.dtype != expected.dtype:
            return float("inf")
        return float((out.double() - expected.double()).abs().max()) if out.numel() else 0.0
    if isinstance(out, (tuple, list)):
        if len(out) != len(expected):
            return float("inf")
        return max((max_diff(o, e) for o, e in zip(out, expected)), default=0.0)
    return 0.0 if out == expected else float("inf")


def export(job: dict) -> dict:
    from tests.reference.export.models import TwoLayer
    from torchair_ref.export import dynamo_export, externalize_threshold

    torch.manual_seed(job.get("seed", 0))
    model = TwoLayer().eval()
    x = torch.randn(2, 4)
    try:
        with file_size_limit(job.get("fsize")), externalize_threshold(0):
            dynamo_export(x, model=model, export_path=job["export"])
    except Exception as exc:  # noqa: BLE001 - reported to the test, which decides whether it was expected
        return {"error": {"type": type(exc).__name__, "message": str(exc)}}
    return {"error": None}


@contextlib.contextmanager
def file_size_limit(nbytes: int | None) -> Iterator[None]:
    """RLIMIT_FSIZE = `nbytes` inside the block (the report after it goes to a file, which must not hit it)."""
    if nbytes is None:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


class _Lines(logging.Handler):
    def __init__(self, sink: list) -> None:
        super().__init__(logging.INFO)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        self.sink.append(f"{record.levelname}: {record.getMessage()}")


def main() -> None:
    job = json.loads(sys.argv[1])
    if job.get("export"):
        print("REPORT " + json.dumps(export(job)), flush=True)
        return
    if job.get("kill_at"):
        install_fault(job["kill_at"], kill)
    for step in job.get("pause_at", []):
        signals = os.path.join(job["signals"], step)
        install_fault(step, pause(signals + ".paused", signals + ".go"))  # each one wraps those installed before
    logs: list[str] = []
    torchair_ref.logger.addHandler(_Lines(logs))
    torchair_ref.logger.setLevel(logging.INFO)
    runs = []
    for _ in range(job.get("passes", 1)):
        for cache_dir in job.get("cache_dirs", [None]):
            del logs[:]
            with warnings.catch_warnings(record=True) as caught, file_size_limit(job.get("fsize")):
                warnings.simplefilter("always")
                run = run_once(job, cache_dir)
            run["warnings"] = [str(w.message) for w in caught if not issubclass(w.category, DeprecationWarning)]
            run["logs"] = list(logs)
            run["cache_dir"] = cache_dir
            runs.append(run)
    print("REPORT " + json.dumps({"runs": runs}), flush=True)


if __name__ == "__main__":
    main()
