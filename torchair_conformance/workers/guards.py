"""Guard worker (SPEC CC-21, CC-22): ``cache_compile`` a `torchair_conformance.guard_models` case's ``forward`` in a
fresh process, make its calls and judge each against eager's result in the same process (for a method that changes
what it reads, `guard_models.MUTATING_KINDS`, against a twin model built and prepared alike).

Job: ``{"impl", "case": {...}, "phase": "cold"|"warm"|"later", "config": [...], "cache_compile": {...}}``. Phase
"cold" makes the cold calls, "warm" the calls the cold trace's guards reject (its first call meets the file),
"later" the cold calls then the others (the file is loaded first). Result: ``calls`` (per call ``outcome``: "equal"
the same dtype, shape and values as eager; "wrong" a value eager did not give, or a value where eager raised;
"raised" with ``error`` and ``eager_error``), ``unique_graphs``, ``logs``, ``warnings``, ``error`` (a failure
outside the calls).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from typing import Any

from torchair_conformance.workers.common import error_record


def _same(got: Any, want: Any) -> bool:
    import torch

    if isinstance(got, torch.Tensor) or isinstance(want, torch.Tensor):
        return (isinstance(got, torch.Tensor) and isinstance(want, torch.Tensor) and got.dtype == want.dtype
                and got.shape == want.shape and torch.allclose(got.double(), want.double(), equal_nan=True,
                                                              atol=1e-2 if got.dtype.itemsize < 4 else 1e-5))
    return got == want


def _judge(model: Any, compiled: Any, args: tuple, kwargs: Mapping[str, Any], context: Any,
           twin: Any = None) -> dict[str, Any]:
    """One call against eager: on `model` after the cached call, or, for a method that changes what it reads, on
    its `twin` (built and prepared alike) with a copy of the arguments taken before the cached call."""
    import copy

    import torch

    eager_args, eager_kwargs = (args, kwargs) if twin is None else copy.deepcopy((args, dict(kwargs)))
    cached_error = eager_error = None
    try:
        with context():
            got = compiled(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - judged against eager's own behaviour below
        cached_error = f"{type(exc).__name__}: {exc}"[:3000]
    try:
        with context(), torch.no_grad():
            want = (model if twin is None else twin).forward(*eager_args, **eager_kwargs)
    except Exception as exc:  # noqa: BLE001 - eager's error: the reference for a clear error
        eager_error = f"{type(exc).__name__}: {exc}"[:1000]
    if cached_error is not None:
        return {"outcome": "raised", "error": cached_error, "eager_error": eager_error}
    if eager_error is not None:
        return {"outcome": "wrong", "got": _describe(got), "eager_error": eager_error}
    return {"outcome": "equal" if _same(got, want) else "wrong", "got": _describe(got), "want": _describe(want)}


def _describe(value: Any) -> str:
    import torch

    return f"{value.dtype} {list(value.shape)}" if isinstance(value, torch.Tensor) else repr(value)[:200]


def run_job(job: Mapping[str, Any]) -> dict[str, Any]:
    """Build, cache_compile, call and judge (see the module docstring)."""
    from torchair_conformance import guard_models, harness, process
    from torchair_conformance import impl as impl_mod

    impl = impl_mod.resolve(job["impl"])
    case, phase = job["case"], job["phase"]
    result: dict[str, Any] = {"calls": [], "error": None}
    model = guard_models.build(case, "cold" if phase == "later" else phase)
    twin = guard_models.build(case, "cold" if phase == "later" else phase) if case["kind"] in \
        guard_models.MUTATING_KINDS else None
    config = harness.make_config(impl, [tuple(o) for o in job.get("config", [])])
    with harness.capture(impl.logger) as captured:
        try:
            compiled = impl.cache_compile(model.forward, config=config, **(job.get("cache_compile") or {}))
            for step in (("cold", "warm") if phase == "later" else (phase,)):
                guard_models.prepare(model, case, step)
                if twin is not None:
                    guard_models.prepare(twin, case, step)
                for args, kwargs, context in guard_models.calls(case, step):
                    result["calls"].append(_judge(model, compiled, args, kwargs, context, twin))
        except Exception as exc:  # noqa: BLE001 - reported to the test
            result["error"] = error_record(exc)
    result["unique_graphs"] = process.traced()["unique_graphs"]
    result["logs"] = [[r.levelno, r.getMessage()] for r in captured.records]
    result["warnings"] = [f"{w.category.__name__}: {w.message}" for w in captured.warnings
                          if not issubclass(w.category, (DeprecationWarning, FutureWarning))]
    return result


def main() -> int:
    from torchair_conformance import process

    job = process.read_job()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    process.reply(run_job(job))
    return 0


if __name__ == "__main__":
    sys.exit(main())
