"""The worker body shared by the cold, warm and rank entry points (job format: ``torchair_conformance.workers``)."""

from __future__ import annotations

import logging
import os
import sys
import traceback
from collections.abc import Mapping
from typing import Any

__all__ = ["run_job", "main", "error_record"]


def error_record(exc: BaseException) -> dict[str, Any]:
    """An exception as JSON: type, message, and the type and message of every exception in its chain."""
    chain = []
    seen = set()
    cur: Any = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        chain.append({"type": f"{type(cur).__module__}.{type(cur).__qualname__}", "message": str(cur)})
        cur = getattr(cur, "inner_exception", None) or cur.__cause__ or cur.__context__
    return {"type": chain[0]["type"], "message": str(exc), "chain": chain,
            "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-4000:]}


def _build(job: Mapping[str, Any]):
    from torchair_conformance import models

    spec = job["module"]
    if spec["kind"] == "stack":
        return models.build_module(spec["structure"], spec["seed"], spec.get("dtype", "float32"))
    return models.build_special(spec["name"], spec["width"], spec["seed"])


def _call_args(job: Mapping[str, Any], call: Mapping[str, Any]):
    from torchair_conformance import models

    if "inputs" in call:
        return tuple(models.make_inputs(call["inputs"])), {}
    spec = job["module"]
    return models.special_args(spec["name"], spec["width"], **call["special"])


def run_job(job: Mapping[str, Any]) -> dict[str, Any]:
    """Build the module, ``cache_compile`` its method, run the calls and report (see
    ``torchair_conformance.workers``)."""
    import torch

    from torchair_conformance import harness, models, process
    from torchair_conformance import impl as impl_mod

    impl = impl_mod.resolve(job["impl"])
    models.use_device(impl.device)
    result: dict[str, Any] = {"digests": [], "eager_max_diff": [], "requires_grad": [], "error": None,
                              "rank": 0, "world_size": 1}
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        result["rank"] = torch.distributed.get_rank()
        result["world_size"] = torch.distributed.get_world_size()
    for name, value in (job.get("globals") or {}).items():
        setattr(models, name, torch.full_like(getattr(models, name), value))
    if job.get("num_threads"):  # a guarded global of the process (GLOBAL_STATE), CC-23
        torch.set_num_threads(int(job["num_threads"]))

    module = _build(job)
    method = getattr(module, job.get("method", "forward"))
    config = harness.make_config(impl, [tuple(o) for o in job.get("config", [])])
    options = dict(job.get("cache_compile") or {})
    with harness.capture(impl.logger) as captured:
        try:
            compiled = impl.cache_compile(method, config=config, **options)
            if job.get("chdir"):
                os.chdir(job["chdir"])
            for call in job.get("calls", []):
                args, kwargs = _call_args(job, call)
                out = compiled(*args, **kwargs)
                result["digests"].append(models.digest(out))
                tensors = [t for t in _flat(out) if isinstance(t, torch.Tensor)]
                result["requires_grad"].append(any(t.requires_grad or t.grad_fn is not None for t in tensors))
                result.setdefault("outputs", []).append(describe_outputs(out, args, kwargs))
                if job.get("compare_eager"):
                    with torch.no_grad():
                        expected = getattr(module, job.get("method", "forward"))(*args, **kwargs)
                    result["eager_max_diff"].append(_max_diff(out, expected))
                    result.setdefault("eager_outputs", []).append(describe_outputs(expected, args, kwargs))
            if job.get("copy"):
                _run_copy(job, module, compiled, result)
        except Exception as exc:  # noqa: BLE001 - reported to the test, which decides whether it was expected
            result["error"] = error_record(exc)
    traced = process.traced()  # after the calls: CC-14's counters
    result["unique_graphs"], result["frames_total"] = traced["unique_graphs"], traced["frames_total"]
    result["logs"] = [[r.levelno, r.getMessage()] for r in captured.records]
    result["warnings"] = [f"{w.category.__name__}: {w.message}" for w in captured.warnings
                          if not issubclass(w.category, (DeprecationWarning, FutureWarning))]
    return result


def _run_copy(job: Mapping[str, Any], module: Any, compiled: Any, result: dict[str, Any]) -> None:
    """CC-24: hold the cached callable on the module (the README's pattern), copy the module (``job["copy"]``:
    ``deepcopy`` or ``pickle``) and run the job's calls on the copy's callable: digests or the copy's error."""
    import copy
    import pickle

    from torchair_conformance import models

    module.cached = compiled
    result["copy_digests"], result["copy_error"] = [], None
    try:
        twin = copy.deepcopy(module) if job["copy"] == "deepcopy" else pickle.loads(pickle.dumps(module))
        for call in job.get("calls", []):
            args, kwargs = _call_args(job, call)
            result["copy_digests"].append(models.digest(twin.cached(*args, **kwargs)))
    except Exception as exc:  # noqa: BLE001 - reported to the test
        result["copy_error"] = error_record(exc)


def _flat(value: Any) -> list[Any]:
    import dataclasses

    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _flat(v)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _flat([getattr(value, f.name) for f in dataclasses.fields(value)])
    return [value]


def describe_outputs(out: Any, args: Any, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """CC-18: the output's container types (``tuple``, a dataclass's or namedtuple's class name), and per tensor
    leaf: the index of the argument tensor whose storage it shares (None: its own), and whether it is a view."""
    import torch

    inputs = [t for t in _flat(list(args) + list(kwargs.values())) if isinstance(t, torch.Tensor)]
    storages = [t.untyped_storage().data_ptr() for t in inputs]

    def types(value: Any) -> Any:
        leaves = list(value) if isinstance(value, (list, tuple)) else (
            [getattr(value, f) for f in value.__dataclass_fields__] if hasattr(value, "__dataclass_fields__") else None)
        return type(value).__name__ if leaves is None else [type(value).__name__, [types(v) for v in leaves]]

    tensors = [t for t in _flat(out) if isinstance(t, torch.Tensor)]
    shared = [storages.index(t.untyped_storage().data_ptr()) if t.untyped_storage().data_ptr() in storages else None
              for t in tensors]
    return {"types": types(out), "shares_input": shared, "is_view": [t._is_view() for t in tensors]}


def _max_diff(out: Any, expected: Any) -> float:
    """The largest absolute difference over tensor leaves; infinity when the structures or non-tensors differ."""
    import torch

    got, want = _flat(out), _flat(expected)
    if len(got) != len(want):
        return float("inf")
    worst = 0.0
    for g, w in zip(got, want):
        if isinstance(g, torch.Tensor) and isinstance(w, torch.Tensor):
            if g.shape != w.shape or g.dtype != w.dtype:
                return float("inf")
            if g.numel():
                worst = max(worst, float((g.double() - w.double()).abs().max()))
        elif g != w:
            return float("inf")
    return worst


def main(setup=None) -> int:
    """Read the job, run it, reply (``torchair_conformance.process``); ``setup(job)`` runs first (e.g. process
    groups)."""
    from torchair_conformance import process

    job = process.read_job()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    teardown = setup(job) if setup else None
    try:
        result = run_job(job)
    finally:
        if teardown:
            teardown()
    process.reply(result)
    return 0
