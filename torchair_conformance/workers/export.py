"""One rank of a gloo world (as ``rank``) that runs ``dynamo_export`` instead of ``cache_compile`` (EX-4..EX-6).

Job::

    {"impl": "torchair_ref",
     "model": {export description, export_zoo.build_export_model},   # built with seed + rank: ranks differ
     "batch": [int, ...], "input_seed": int,
     "export_path": "/abs/dir", "export_name": "net", "dynamic": false,
     "config": [["export.experimental.auto_atc_config_generated", true], ...],
     "threshold": null | int,                                       # via the set_externalize_threshold hook
     "execute": [[int, ...], ...]}                                  # optional (EX-11): batches to run the graph on

Result (``torchair_conformance.process``): ``{"rank", "world_size", "returned" (repr), "error" (or null), "logs"}``, and
with ``execute`` ``"executed": {"<batch>": [[mismatch, max |graph - eager|, bound], ...]}`` per batch: the rank's
exported graph run by the GE executor in this process (its collective through the gloo world) against the eager
model (``torchair_conformance.execute.differences``).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from typing import Any


def run_export(job: Mapping[str, Any]) -> dict[str, Any]:
    """Build this rank's model and inputs, export them, report."""
    import torch.distributed as dist

    from torchair_conformance import export_zoo, harness, models
    from torchair_conformance import impl as impl_mod
    from torchair_conformance.workers.common import error_record

    impl = impl_mod.resolve(job["impl"])
    models.use_device(impl.device)
    rank, world = (dist.get_rank(), dist.get_world_size()) if dist.is_initialized() else (0, 1)
    result: dict[str, Any] = {"rank": rank, "world_size": world, "returned": None, "error": None}
    spec = {**job["model"], "seed": job["model"]["seed"] + rank}
    module = export_zoo.build_export_model(spec)
    args, kwargs = export_zoo.export_inputs(spec, job["batch"], job["input_seed"])
    config = harness.make_config(impl, [tuple(o) for o in job.get("config", [])])
    threshold = job.get("threshold")
    with harness.capture(impl.logger) as captured:
        try:
            with harness.export_threshold(impl, threshold):
                returned = impl.dynamo_export(*args, model=module, export_path=job["export_path"],
                                              export_name=job["export_name"], dynamic=job["dynamic"], config=config,
                                              **kwargs)
            result["returned"] = repr(returned)
            if job.get("execute"):
                result["executed"] = _execute(job, spec, module, rank if dist.is_initialized() else None)
        except Exception as exc:  # noqa: BLE001 - reported to the test
            result["error"] = error_record(exc)
    result["logs"] = [[r.levelno, r.getMessage()] for r in captured.records]
    return result


def _execute(job: Mapping[str, Any], spec: Mapping[str, Any], module: Any, rank: Any) -> dict[str, Any]:
    """EX-11: run this rank's exported graph on each batch of ``job["execute"]`` and compare with eager; every rank
    runs the same sequence (eager, then graph, per batch), so their collectives pair up."""
    import os

    from torchair_conformance import execute, export_zoo, exports

    air = os.path.join(job["export_path"], exports.air_name(job["export_name"], rank))
    executed = {}
    for batch in job["execute"]:
        args, kwargs = export_zoo.export_inputs(spec, batch, job["input_seed"])
        want = execute.eager_outputs(module, args, kwargs)
        truth = execute.reference_outputs(module, args, kwargs)  # every rank: eager, float64, graph (collectives pair)
        got = execute.closest(execute.run_air(air, execute.user_tensors(args, kwargs)), want, truth)
        executed[str(batch)] = [list(d) for d in execute.differences(got, want, truth)]
    return executed


def main() -> int:
    from torchair_conformance import process
    from torchair_conformance.workers.rank import init_world

    job = process.read_job()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    teardown = init_world(job)
    try:
        result = run_export(job)
    finally:
        teardown()
    process.reply(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
