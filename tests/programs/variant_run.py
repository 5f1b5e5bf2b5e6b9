"""A fresh process for the variant and copy tests (CC-23, CC-24): build `Model`, call it, report.

Usage: python -m tests.programs.variant_run, job in and report out as `torchair_conformance.process` says. Job keys:
cache_dir, threads (`torch.set_num_threads`), ge_cache, inductor (the true default config; else the fast eager
compiler), pickle_out (after the call, pickle the module to this path), pickle_in (call the module unpickled from
this path instead of a new one), dynamic (cache_compile's; default True), batch (the input's first size; default 4),
inputs (a list of "plain", "sub" or "extra": one call each, the input a plain tensor, a `Shifted`, or a plain
tensor passed twice, an argument the method does not take; default ["plain"]). The report: whether every output
equals the eager method's, the calls' errors, Dynamo's graph count, the warnings, and how many graphs the warm start
loaded (`graph_loads`: calls of the compilers' loader, counted by wrapping it; the loader itself runs unchanged), and
how many per-call checks were compiled from their source (`check_compiles`: `guard_check`'s `compile` calls in "exec"
mode, counted by shadowing the builtin in that module; a warm start that loads its record's stored check compiles
none), how many reads of a source its per-call checks wrote (`check_source_reads`: calls of
`guard_check._source_code`; a warm start whose stored check fits by its outline writes none), and how many stored
checks had their constants rebuilt from the record's replay table (`replayed`: `guard_bindings.replayed` calls that
gave constants).
"""
from __future__ import annotations

import logging
import pickle
import sys
import warnings

import torch

import torchair_ref
import torchair_ref.compilers
from torchair_conformance import process
from torchair_ref.inference import guard_bindings, guard_check

_LOADS: list[object] = []
_load = torchair_ref.compilers.load


def _counted_load(*args: object, **kwargs: object) -> object:
    _LOADS.append(args[0])
    return _load(*args, **kwargs)


torchair_ref.compilers.load = _counted_load

_CHECK_COMPILES: list[str] = []


def _counted_compile(source: str, filename: str, mode: str, *args: object, **kwargs: object) -> object:
    if mode == "exec":
        _CHECK_COMPILES.append(filename)
    return compile(source, filename, mode, *args, **kwargs)  # type: ignore[call-overload]


guard_check.compile = _counted_compile  # type: ignore[attr-defined]
_SOURCE_READS: list[str] = []
_source_code = guard_check._source_code


def _counted_source_code(source: str, *args: object, **kwargs: object) -> str:
    _SOURCE_READS.append(source)
    return _source_code(source, *args, **kwargs)  # type: ignore[arg-type]


guard_check._source_code = _counted_source_code
_REPLAYED: list[object] = []
_replayed = guard_bindings.replayed


def _counted_replayed(*args: object, **kwargs: object) -> object:
    found = _replayed(*args, **kwargs)  # type: ignore[arg-type]
    if found is not None:
        _REPLAYED.append(found)
    return found


guard_bindings.replayed = _counted_replayed  # type: ignore[assignment]


class Model(torch.nn.Module):
    """The README's pattern: the cached method held by the module."""

    def __init__(self, cache_dir: str, ge_cache: bool, inductor: bool, dynamic: bool = True) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
        config = torchair_ref.CompilerConfig()
        config.mode = "max-autotune"
        config.debug.run_eagerly = not inductor
        self.cached = torchair_ref.inference.cache_compile(self.run, config=config, cache_dir=cache_dir,
                                                           ge_cache=ge_cache, dynamic=dynamic)

    def run(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x)) * 2


class Shifted(torch.Tensor):
    """A tensor subclass whose `__torch_function__` adds 1 to every relu: eager and Dynamo give other values than
    for a plain tensor (CC-21: a tensor input's Python type is part of the check)."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206 - torch's protocol
        result = super().__torch_function__(func, types, args, kwargs or {})
        return result + 1 if func is torch.relu else result


def main() -> None:
    job = process.read_job()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    torch.set_num_threads(job.get("threads", 1))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.manual_seed(0)
        if job.get("pickle_in"):
            with open(job["pickle_in"], "rb") as handle:
                model = pickle.load(handle)
        else:
            model = Model(job["cache_dir"], job.get("ge_cache", False), job.get("inductor", False),
                          job.get("dynamic", True))
        equal, errors = True, []
        for kind in job.get("inputs", ["plain"]):
            x = torch.randn(job.get("batch", 4), 8)
            x = x.as_subclass(Shifted) if kind == "sub" else x
            try:
                got = model.cached(x, x) if kind == "extra" else model.cached(x)
            except Exception as exc:  # noqa: BLE001 - reported: CC-21 allows a clear error, never a wrong value
                errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
                continue
            with torch.no_grad():
                expected = model.run(x)
            equal = equal and bool(torch.allclose(got.as_subclass(torch.Tensor), expected.as_subclass(torch.Tensor),
                                                  atol=1e-5))
        if job.get("pickle_out"):
            with open(job["pickle_out"], "wb") as handle:
                pickle.dump(model, handle)
    process.reply({"equal": equal, "errors": errors, "unique_graphs": process.traced()["unique_graphs"],
                   "graph_loads": len(_LOADS), "check_compiles": len(_CHECK_COMPILES),
                   "check_source_reads": len(_SOURCE_READS), "replayed": len(_REPLAYED),
                   "warnings": [str(w.message) for w in caught if not issubclass(w.category, DeprecationWarning)]})


if __name__ == "__main__":
    main()
