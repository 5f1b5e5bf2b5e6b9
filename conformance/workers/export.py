"""One rank of a gloo world (as ``rank``) that runs ``dynamo_export`` instead of ``cache_compile`` (EX-4..EX-6).

Job::

    {"impl": "torchair_ref",
     "model": {export description, models.build_export_model},   # built with seed + rank: ranks differ
     "batch": [int, ...], "input_seed": int,
     "export_path": "/abs/dir", "export_name": "net", "dynamic": false,
     "config": [["export.experimental.auto_atc_config_generated", true], ...],
     "threshold": null | int}                                       # via the set_externalize_threshold hook

Result (``conformance.process``): ``{"rank", "world_size", "returned" (repr), "error" (or null), "logs"}``.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, Dict, Mapping


def run_export(job: Mapping[str, Any]) -> Dict[str, Any]:
    """Build this rank's model and inputs, export them, report."""
    import torch.distributed as dist

    from conformance import harness, impl as impl_mod, models
    from conformance.workers.common import error_record

    impl = impl_mod.resolve(job["impl"])
    models.use_device(impl.device)
    rank, world = (dist.get_rank(), dist.get_world_size()) if dist.is_initialized() else (0, 1)
    result: Dict[str, Any] = {"rank": rank, "world_size": world, "returned": None, "error": None}
    spec = {**job["model"], "seed": job["model"]["seed"] + rank}
    module = models.build_export_model(spec)
    args, kwargs = models.export_inputs(spec, job["batch"], job["input_seed"])
    config = harness.make_config(impl, [tuple(o) for o in job.get("config", [])])
    threshold = job.get("threshold")
    with harness.capture(impl.logger) as captured:
        try:
            with harness.export_threshold(impl, threshold):
                returned = impl.dynamo_export(*args, model=module, export_path=job["export_path"],
                                              export_name=job["export_name"], dynamic=job["dynamic"], config=config,
                                              **kwargs)
            result["returned"] = repr(returned)
        except Exception as exc:  # reported to the test
            result["error"] = error_record(exc)
    result["logs"] = [[r.levelno, r.getMessage()] for r in captured.records]
    return result


def main() -> int:
    from conformance import process
    from conformance.workers.rank import init_world

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
