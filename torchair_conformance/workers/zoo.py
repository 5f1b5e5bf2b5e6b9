"""Zoo worker (SPEC CC-1, CC-14, CC-18): one fresh process of a real model's cold, warm or eager run.

Job: ``{"impl", "model": <zoo name>, "pattern": "plain"|"served"|"served-dynamic"|"vllm", "phase":
"cold"|"warm"|"eager", "cache_dir", "config": [[dotted option, value], ...], "spawned_at": <time.time() at spawn>,
"variant": null | "no_mask"}`` (a variant changes the warm steps: ``patterns.VARIANTS``). The model is built with
``torchair_conformance.zoo.patterns.build`` (seed 0) and wrapped as the pattern says with the implementation's
``cache_compile`` (none in the eager phase, which imports no implementation and no Dynamo); the phase's steps
(``patterns.script``) run, then (cold and warm) the same steps eagerly on the same module, with fresh KV caches.

Result: ``steps`` (per step: ``label``, ``digest`` (``models.digest``), ``seconds``, and against eager
``max_abs_diff`` and ``close`` (float32: rtol 1e-3, atol 1e-4)); ``kv_max_abs_diff`` (the served patterns: the
largest difference between the KV caches the cached and the eager conversations filled); the phases in seconds:
``startup_s`` (spawn to before ``import torch``), ``import_s``, ``build_s`` (model, wrapper, ``cache_compile``),
``first_call_s``, ``ttfo_s`` (spawn to the first output), ``load_s`` (first call start to the implementation's
``... loaded from`` record, CC-20; null when none), ``repeat_s`` (the plain pattern's warm repeat of the first
call); ``unique_graphs`` and ``frames_total`` (Dynamo's counters after every step, CC-14); ``warnings`` and
``not_cached`` (the warnings that say ``is not cached``); ``logs``; ``versions``; ``error`` (or null).
"""
from __future__ import annotations

import logging
import sys
import time
import warnings
from typing import Any

from torchair_conformance import impl as impl_switch  # no torch here: `import torch` is timed
from torchair_conformance import process
from torchair_conformance.workers.common import error_record

#: float32 comparison with eager (issue 29's bar): torch.allclose(rtol, atol)
RTOL, ATOL = 1e-3, 1e-4


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[logging.LogRecord] = []
        self.loaded_at: float | None = None

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        if self.loaded_at is None and "loaded from" in record.getMessage():
            self.loaded_at = time.perf_counter()


def run(job: dict[str, Any]) -> dict[str, Any]:
    """The job's phase in this process (see the module docstring)."""
    startup = max(0.0, time.time() - job["spawned_at"]) if job.get("spawned_at") else 0.0
    t_start = time.perf_counter()
    phase = job["phase"]
    import torch

    impl = None if phase == "eager" else impl_switch.load(job["impl"])
    t_imported = time.perf_counter()
    from torchair_conformance import models
    from torchair_conformance.zoo import packages, patterns

    result: dict[str, Any] = {"phase": phase, "startup_s": startup, "import_s": t_imported - t_start, "steps": [],
                              "error": None, "load_s": None, "repeat_s": None, "kv_max_abs_diff": None}
    records = _Records()
    if impl is not None:
        impl.logger.addHandler(records)
        if impl.logger.getEffectiveLevel() > logging.INFO:
            impl.logger.setLevel(logging.INFO)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            torch.manual_seed(0)
            options = {} if impl is None else {"config": _config(impl, job.get("config", [])),
                                               "cache_dir": job["cache_dir"]}
            built = patterns.build(job["model"], job["pattern"], impl.inference.cache_compile if impl else None,
                                   options)
            steps = patterns.script(built, "warm" if phase == "warm" else "cold", job.get("variant"))
            t_built = time.perf_counter()
            result["build_s"] = t_built - t_imported
            outputs, caches = _play(built, steps, cached=impl is not None, result=result, records=records,
                                    t_start=t_start, startup=startup)
            if impl is not None:
                expected, eager_caches = _play(built, steps, cached=False)
                for record, got, want in zip(result["steps"], outputs, expected):
                    record["max_abs_diff"], record["close"] = compare(got, want)
                if caches:
                    result["kv_max_abs_diff"] = max(compare(_kv(caches[k]), _kv(eager_caches[k]))[0] for k in caches)
            for record, out in zip(result["steps"], outputs):
                record["digest"] = models.digest(out)
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which judges it
            result["error"] = error_record(exc)
        result["warnings"] = [f"{w.category.__name__}: {w.message}" for w in seen
                              if not issubclass(w.category, (DeprecationWarning, FutureWarning))]
    result["not_cached"] = [str(w.message) for w in seen if "is not cached" in str(w.message)]
    result["logs"] = [[r.levelno, r.getMessage()] for r in records.records]
    traced = process.traced()  # after the timings: CC-14's counters
    result["unique_graphs"], result["frames_total"] = traced["unique_graphs"], traced["frames_total"]
    result["versions"] = packages.versions()
    return result


def _play(built: Any, steps: list, *, cached: bool, result: dict | None = None, records: _Records | None = None,
          t_start: float = 0.0, startup: float = 0.0) -> tuple[list, dict]:
    """Run `steps` on the cached callables (or eagerly); with `result`, time each step into it."""
    import torch

    caches: dict[str, Any] = {}
    outputs = []
    for index, step in enumerate(steps):
        args = step.args
        if step.state is not None:
            args = (*args, caches.setdefault(step.state, built.new_cache()))
        fn = built.cached[step.method] if cached else built.eager(step.method)
        began = time.perf_counter()
        with torch.no_grad():
            outputs.append(fn(*args, **step.kwargs))
        took = time.perf_counter() - began
        if result is None:
            continue
        result["steps"].append({"label": step.label, "seconds": took})
        if index == 0:
            result["first_call_s"] = took
            result["ttfo_s"] = startup + time.perf_counter() - t_start
            if records is not None and records.loaded_at is not None:
                result["load_s"] = records.loaded_at - began
        elif step.label == "cold inputs again":
            result["repeat_s"] = took
    return outputs, caches


def _kv(cache: Any) -> list:
    """The tensors a KV cache holds, layer by layer."""
    return [t for layer in cache.layers for t in (layer.keys, layer.values)]


def _leaves(value: Any) -> list:
    import dataclasses

    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _leaves([getattr(value, f.name) for f in dataclasses.fields(value)])
    return [value]


def compare(got: Any, want: Any) -> tuple[float, bool]:
    """max |got - want| over tensor leaves, and whether every leaf is close (rtol 1e-3, atol 1e-4); structures or
    non-tensor leaves that differ give (inf, False)."""
    import torch

    got_leaves, want_leaves = _leaves(got), _leaves(want)
    if len(got_leaves) != len(want_leaves):
        return float("inf"), False
    worst, close = 0.0, True
    for g, w in zip(got_leaves, want_leaves):
        if isinstance(g, torch.Tensor) and isinstance(w, torch.Tensor):
            if g.shape != w.shape or g.dtype != w.dtype:
                return float("inf"), False
            if g.numel():
                worst = max(worst, float((g.double() - w.double()).abs().max()))
                close = close and bool(torch.allclose(g, w, rtol=RTOL, atol=ATOL))
        elif g != w:
            return float("inf"), False
    return worst, close


def _config(impl: Any, options: list) -> Any:
    """CF-1: a fresh `CompilerConfig` with each `[dotted.path, value]` assigned as written."""
    config = impl.CompilerConfig()
    for path, value in options:
        *groups, leaf = path.split(".")
        target = config
        for group in groups:
            target = getattr(target, group)
        setattr(target, leaf, value)
    return config


def main() -> int:
    job = process.read_job()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    process.reply(run(job))
    return 0


if __name__ == "__main__":
    sys.exit(main())
