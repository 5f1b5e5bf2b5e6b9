"""A fresh process for the guard tests: run a case script as `__main__`, call its cached method, compare with eager.

Usage: python -m tests.programs.guard_run, job in and report out as `torchair_conformance.process` says. Job keys:
script (path of a case script), phase (a name the script reads as the global PHASE at import time, e.g. "cold" or
"warm"), dynamic, run_eagerly (default true; false compiles with Inductor), twin (default false; true judges each
call against a second model built alike, for methods that change the state they read: `outcome`). The script runs as
`__main__` (as `python script.py` would: its classes live in `__main__`), ends with `RUN(build, calls)` (RUN is
given to it as a global) and defines `build(options) -> module` whose `cached` attribute is the cache_compile'd
`run` method, and `calls(model) -> iterable of (module, args, kwargs[, context manager factory])`: a generator may
change the model between calls (hooks, modes, monkeypatches) or build another instance. Each call runs
`module.cached`, then eagerly (`module.run`, under no_grad) in the same state and context; the report holds each
call's outcome ("equal": the same dtype, shape and values as eager; "wrong": a value eager did not give; "raised":
the cached call raised, with `error` and whether eager raised too), Dynamo's graph count and the UserWarnings
issued. A crash (SIGSEGV on a read outside an input) is the parent's ProcessError.
"""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import logging
import runpy
import sys
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import torch

import torchair_ref
from torchair_conformance import process


def same(a: Any, b: Any) -> bool:
    """Equal as a user would check eager against compiled: dtype, shape, then values within float tolerance."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dtype == b.dtype
                and a.shape == b.shape and torch.allclose(a.float(), b.float(), atol=1e-2 if a.dtype.itemsize < 4
                                                          else 1e-5, equal_nan=True))
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and same(dataclasses.astuple(a), dataclasses.astuple(b))
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def describe(value: Any) -> Any:
    """What the report says about an output (enough to read a failure)."""
    if isinstance(value, torch.Tensor):
        return f"{value.dtype} {list(value.shape)}"
    if isinstance(value, (tuple, list)):
        return [describe(v) for v in value]
    return repr(value)[:200]


def outcome(model: torch.nn.Module, args: tuple, kwargs: dict, context: Any,
            eager: torch.nn.Module | None = None) -> dict:
    """One call judged against eager: on `model` itself after the cached call, or, for a method that changes the
    state it reads (a counter, a lazily built attribute, a list argument it appends to), on its `eager` twin (built
    alike, changed alike between calls) with a copy of the arguments taken before the cached call."""
    eager_args, eager_kwargs = (args, kwargs) if eager is None else copy.deepcopy((args, kwargs))
    try:
        with context():
            got = model.cached(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - reported to the test, which judges it against eager
        cached_error = f"{type(exc).__name__}: {exc}"
    else:
        cached_error = None
    try:
        with context(), torch.no_grad():
            want = (model if eager is None else eager).run(*eager_args, **eager_kwargs)
    except Exception as exc:  # noqa: BLE001 - eager's own error is the reference for a clear error
        eager_error = f"{type(exc).__name__}: {exc}"
    else:
        eager_error = None
    if cached_error is not None:
        return {"outcome": "raised", "error": cached_error[:3000], "eager_error": eager_error}
    if eager_error is not None:
        return {"outcome": "wrong", "got": describe(got), "eager_error": eager_error}
    return {"outcome": "equal" if same(got, want) else "wrong", "got": describe(got), "want": describe(want)}


def main(job: dict, build: Callable[[dict], torch.nn.Module],
         calls: Callable[[torch.nn.Module], Iterable[tuple]]) -> None:
    """The script's RUN: build with the job's options, make every call, reply."""
    config = torchair_ref.CompilerConfig()
    config.debug.run_eagerly = job.get("run_eagerly", True)
    options = {"config": config, "dynamic": job.get("dynamic", True)}
    report: dict = {"calls": []}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.manual_seed(0)
        model = build(options)
        if job.get("twin"):
            torch.manual_seed(0)
            twin = build(options)
            for call, twin_call in zip(calls(model), calls(twin)):
                target, args, kwargs, *context = call
                report["calls"].append(outcome(target, args, kwargs, context[0] if context else contextlib.nullcontext,
                                               eager=twin_call[0]))
        else:
            for call in calls(model):
                target, args, kwargs, *context = call
                report["calls"].append(outcome(target, args, kwargs,
                                               context[0] if context else contextlib.nullcontext))
    report["unique_graphs"] = process.traced()["unique_graphs"]
    report["warnings"] = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    process.reply(report)


if __name__ == "__main__":
    job = process.read_job()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    runpy.run_path(job["script"], init_globals={"PHASE": job["phase"], "RUN": functools.partial(main, job)},
                   run_name="__main__")
