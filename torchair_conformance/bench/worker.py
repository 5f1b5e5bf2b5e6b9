"""One measured fresh process (SPEC BE-1, BE-2): `python -m torchair_conformance.bench.worker`, spec in and result
out as `torchair_conformance.process` says.

The parent passes the wall-clock time at which it spawned the process (`spawned_at`), so interpreter start-up is
measured too. Phases, in seconds, which add up to the time to first output (`ttfo_s`, spawn -> first output):

- `startup_s`  spawn -> just before `import torch` (interpreter start, `-m` resolution, this module's own imports,
  reading the spec);
- `import_s`   `import torch` (+ `torch_npu`) and the implementation, imported by the suite's IMPL-3 rule
  (`torchair_conformance.impl.load`; the CLI checked its IMPL-1 surface with `torchair_conformance.impl.resolve` in a
  fresh process before the first measurement: a surface check here would import what a warm start must not)
  (`startup_import_s`: the two together);
- `build_s`    model construction, inputs, and wrapping the method (`cache_compile(...)`, `torch.compile(...)`);
- `compile_or_load_s` Dynamo trace + graph compile + save, or the cache load; `compile_or_load_how` says how it was
  measured: `explicit` (a separate API call: `aot_compile`, `load_compiled_function`), `log` (from the call's start
  to the implementation's `... loaded from <path>` log record, CC-20), or `first-minus-second` (the first call's time
  beyond the second call's: lazy callables that compile inside their first call);
- `first_call_s` the rest of the first call (its execution).

Also: `steady_s`/`steady_min_s` (median/min per-call latency after warm-up), `artifact_bytes`, `cache_hit` (the
cache file existed before the first call), `traced` (Dynamo/Inductor imported, Dynamo's graph and frame counters,
read after the timings: CC-14), `output_sha256` of the first output, `env` (BE-3) and `rss_mb`.

Subjects: `eager` (no compile), `impl` (the implementation's `cache_compile`: cold or warm by the cache folder's
state), `inductor` (`torch.compile` with Inductor, whose caches the parent points at), `aot-save`/`aot-load`
(PyTorch's `aot_compile` + `save_compiled_function`, `torch.compiler.load_compiled_function`), `overhead` (per-call
overhead of a warm cached callable against the compiled graph called directly, see `overhead`).

The result is one JSON object (version `WORKER_FORMAT`); the process exits 1 when it holds an `error`.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib
import logging
import os
import resource
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from torchair_conformance import impl as impl_switch  # no torch here: `import torch` is timed in `run`
from torchair_conformance import process

WORKER_FORMAT = 1
SUBJECTS = ("eager", "impl", "inductor", "aot-save", "aot-load", "overhead")


class Skip(Exception):
    """The subject cannot run here (e.g. this torch has no `aot_compile`); the message says why."""


def main() -> int:
    spec = process.read_job()
    try:
        result = run(spec)
        status = 0
    except Skip as exc:
        result, status = {"skipped": str(exc)}, 0
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which decides
        result = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
        status = 1
    result["format"] = WORKER_FORMAT
    result["subject"] = spec["subject"]
    process.reply(result)
    return status


def run(spec: dict[str, Any]) -> dict[str, Any]:
    """BE-2: one subject's phases in this process."""
    subject = spec["subject"]
    if subject not in SUBJECTS:
        raise ValueError(f"unknown subject {subject!r}; known: {', '.join(SUBJECTS)}")
    impl_name = spec.get("impl")
    device = spec.get("device") or "cpu"
    uses_impl = subject in ("impl", "overhead")

    startup = max(0.0, time.time() - spec["spawned_at"]) if spec.get("spawned_at") else 0.0
    t_start = time.perf_counter()
    if device == "npu":
        importlib.import_module("torch_npu")
    import torch

    impl = impl_switch.load(impl_name) if uses_impl else None
    t_imported = time.perf_counter()

    from torchair_conformance.bench import models

    built = models.build(spec["model"], device=device)
    phases: dict[str, Any] = {"startup_s": startup, "import_s": t_imported - t_start,
                              "startup_import_s": startup + t_imported - t_start}
    record: dict[str, Any] = {}
    if subject == "overhead":
        record = _overhead(spec, impl, built)
        record["env"] = _environment(impl_name, impl, device)
        return record

    loaded_at: list[float] = []
    explicit = 0.0
    if subject == "eager":
        fn = _no_grad(built.bound())
    elif subject == "impl":
        record["cache_hit"] = _has_compiled_module(spec["cache_dir"])
        _watch_load(impl.logger, loaded_at)
        fn = _cached(impl, spec, built)
    elif subject == "inductor":
        fn = _no_grad(torch.compile(built.bound(), fullgraph=True, dynamic=spec["dynamic"],
                                    mode=_torch_compile_mode(spec["mode"])))
    else:
        t_built = time.perf_counter()
        fn = _aot(subject, spec, built)
        explicit = time.perf_counter() - t_built
    t_ready = time.perf_counter()
    phases["build_s"] = t_ready - t_imported - explicit

    output = fn(*built.args, **built.kwargs)
    _sync(device)
    t_first = time.perf_counter()
    phases["ttfo_s"] = startup + (t_first - t_start)
    first = t_first - t_ready

    second = _timed(fn, built, device)
    if explicit:
        phases["compile_or_load_s"], how = explicit, "explicit"
    elif loaded_at:
        phases["compile_or_load_s"], how = loaded_at[0] - t_ready, "log"
    elif subject == "eager":
        phases["compile_or_load_s"], how = 0.0, "none"
    else:
        phases["compile_or_load_s"], how = max(0.0, first - second), "first-minus-second"
    phases["first_call_s"] = first - (0.0 if explicit else phases["compile_or_load_s"])
    steady = steady_state(lambda: _timed(fn, built, device), **spec.get("steady", {}))

    traced = _traced()
    record.update(phases)
    record.update(
        compile_or_load_how=how,
        second_call_s=second,
        steady_s=steady["median"],
        steady_min_s=steady["min"],
        steady_calls=steady["calls"],
        artifact_bytes=_artifact_bytes(subject, spec),
        traced=traced,
        output_sha256=digest(output),
        rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        env=_environment(impl_name, impl, device),
    )
    return record


def _cached(impl: Any, spec: dict[str, Any], built: Any) -> Callable:
    """The implementation's `cache_compile` of the built method, configured as the spec says."""
    return impl.inference.cache_compile(built.bound(), config=impl_config(impl, spec), dynamic=spec["dynamic"],
                                        cache_dir=spec["cache_dir"], ge_cache=spec["ge_cache"])


def _overhead(spec: dict[str, Any], impl: Any, built: Any) -> dict[str, Any]:
    """The `overhead` subject: a warm cached callable (from `spec["cache_dir"]`) against the direct graph."""
    from torchair_conformance.bench import overhead

    compiler = "eager" if spec["run_eagerly"] else "inductor"
    if (spec.get("device", "cpu") == "npu" or spec.get("compiler") == "ge") and compiler != "eager":
        raise Skip("the graph called directly is built with Inductor or as the ATen graph; GE graphs are not")
    return overhead.measure(_cached(impl, spec, built), built, compiler=compiler, dynamic=spec["dynamic"],
                            **spec.get("overhead", {}))


def _traced() -> dict[str, Any]:
    """CC-14: whether this process imported Dynamo/Inductor, and Dynamo's counters (read after the timings), as
    `process.traced` gives them (a process that never imported Dynamo traced nothing, and importing it would lengthen
    a process whose wall time is being measured); ``frames_total`` is null there, as the history has it."""
    traced = process.traced()
    if not traced["dynamo_imported"]:
        traced["frames_total"] = None
    return traced


def steady_state(call: Callable[[], float], *, warmup: int = 3, max_calls: int = 200, budget_s: float = 1.0,
                 min_calls: int = 5) -> dict[str, float]:
    """BE-2: per-call latency after `warmup` calls; as many calls as fit the budget, within [min_calls, max_calls]."""
    for _ in range(warmup):
        call()
    times: list[float] = []
    deadline = time.perf_counter() + budget_s
    while len(times) < max_calls and (len(times) < min_calls or time.perf_counter() < deadline):
        times.append(call())
    times.sort()
    return {"median": times[len(times) // 2], "min": times[0], "calls": len(times)}


def digest(value: Any) -> str:
    """SHA-256 over an output's tensors' bytes (bitwise equality of cold and warm outputs, CC-14)."""
    import torch

    hasher = hashlib.sha256()

    def feed(v: Any) -> None:
        if isinstance(v, torch.Tensor):
            hasher.update(v.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
        elif isinstance(v, (tuple, list)):
            for item in v:
                feed(item)
        else:
            hasher.update(repr(v).encode())

    feed(value)
    return hasher.hexdigest()


def impl_config(impl: Any, spec: dict[str, Any]) -> Any:
    config = impl.CompilerConfig()
    config.mode = spec["mode"]
    config.debug.run_eagerly = spec["run_eagerly"]
    return config


def _torch_compile_mode(mode: str) -> str | None:
    """TorchAir's max-autotune is its graph mode, not Inductor's autotuning: it maps to torch.compile's default."""
    return "reduce-overhead" if mode == "reduce-overhead" else None


def _aot(subject: str, spec: dict[str, Any], built: Any) -> Callable:
    """PyTorch's own precompile: `aot_compile` + `save_compiled_function`, or `load_compiled_function`."""
    import torch

    if not hasattr(torch.compiler, "load_compiled_function"):
        raise Skip(f"torch {torch.__version__} has no torch.compiler.load_compiled_function")
    module = built.module
    if subject == "aot-save":
        compiled = torch.compile(built.bound(), fullgraph=True, dynamic=spec["dynamic"],
                                 mode=_torch_compile_mode(spec["mode"]))
        if not hasattr(compiled, "aot_compile"):
            raise Skip(f"torch {torch.__version__}: torch.compile(...) has no aot_compile")
        function = _aot_compile(compiled, built)
        function.save_compiled_function(spec["aot_file"])
    else:
        with open(spec["aot_file"], "rb") as handle:
            function = torch.compiler.load_compiled_function(handle)
    # An aot-compiled method takes its module as the first argument.
    return _no_grad(lambda *args, **kwargs: function(module, *args, **kwargs))


def _aot_compile(compiled: Any, built: Any, attempts: int = 3) -> Any:
    """`aot_compile`, restarted as Dynamo restarts a `torch.compile` trace when it asks to (for instance to
    specialize a float it had first traced as a tensor: `TensorifyScalarRestartAnalysis`); `aot_compile` itself
    leaves the restart to its caller."""
    import torch
    from torch._dynamo.exc import RestartAnalysis

    for attempt in range(attempts):
        try:
            with torch.no_grad():
                return compiled.aot_compile((built.args, built.kwargs))
        except RestartAnalysis:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


def _no_grad(fn: Callable) -> Callable:
    """Baselines run as inference too (the implementation's callable does so itself, CC-16)."""
    import torch

    def call(*args: Any, **kwargs: Any) -> Any:
        with torch.no_grad():
            return fn(*args, **kwargs)

    return call


def _timed(fn: Callable, built: Any, device: str) -> float:
    start = time.perf_counter()
    fn(*built.args, **built.kwargs)
    _sync(device)
    return time.perf_counter() - start


def _sync(device: str) -> None:
    if device == "cpu":
        return
    import torch

    getattr(torch, device).synchronize()


class _LoadWatch(logging.Handler):
    """Notes the time of the implementation's `... loaded from <path>` record (CC-20)."""

    def __init__(self, times: list[float]) -> None:
        super().__init__(logging.INFO)
        self._times = times

    def emit(self, record: logging.LogRecord) -> None:
        if not self._times and "loaded from" in record.getMessage():
            self._times.append(time.perf_counter())


def _watch_load(logger: logging.Logger, times: list[float]) -> None:
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    logger.addHandler(_LoadWatch(times))


def _has_compiled_module(cache_dir: str) -> bool:
    return any("compiled_module" in files for _, _, files in os.walk(cache_dir))


def _artifact_bytes(subject: str, spec: dict[str, Any]) -> int | None:
    """Bytes of what the subject's warm start reads: the cache folder, the aot file, Inductor's cache."""
    if subject == "impl":
        return tree_bytes(spec["cache_dir"])
    if subject in ("aot-save", "aot-load"):
        return os.path.getsize(spec["aot_file"])
    if subject == "inductor":
        return tree_bytes(os.environ.get("TORCHINDUCTOR_CACHE_DIR", ""))
    return None


def tree_bytes(root: str) -> int:
    """Total size of the regular files under `root` (0 when it does not exist)."""
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total


def _environment(impl_name: str | None, impl: Any, device: str) -> dict[str, Any]:
    from torchair_conformance.bench import environment

    return environment.collect(impl_name, impl, device)


if __name__ == "__main__":
    sys.exit(main())
