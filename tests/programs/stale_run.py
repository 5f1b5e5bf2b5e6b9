"""A fresh process for the staleness and input-check tests: import a model from a source file, call it, report.

Usage: python -m tests.programs.stale_run, job in and report out as `torchair_conformance.process` says. Job keys:
source
(path of a model file defining `build(options)`), run_eagerly, dynamic, calls (list of {"shape", "dtype", "device",
"instance"}, in order), to_dtype (applied to the model before the first call), train, threads (first call from that
many threads at once), instances (build and call that many models, then count the `__torchair_ref` names left in
the model file's globals), break (a fault to inject: "loader" makes the eager compiler's loader import a module
that is not there, "declaration" makes Inductor's kernel declarations unreadable, "traced_code" / "cache_entries"
remove a private PyTorch attribute the cold path reads, "seam:<accessor>" makes that accessor of `torchair_ref._torch`
raise as for a name this torch lacks). The report holds, per call, whether the output equals the eager method's,
Dynamo's graph count, the warnings, and the error of a call that raised.
"""
from __future__ import annotations

import importlib.util
import logging
import sys
import threading
import warnings

import torch

import torchair_ref
from torchair_conformance import process


def load_source(path: str):
    spec = importlib.util.spec_from_file_location("stale_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def inject(fault: str) -> None:
    if fault == "loader":
        from torchair_ref.compilers import eager

        def renamed(record, kernel_dir, guaranteed=None):
            # the warm loader alone fails, as on a torch that renamed a module it imports; building still works
            importlib.import_module("torchair_ref.compilers.renamed_eager")

        eager.load = renamed
    elif fault == "declaration":
        import re

        from torchair_ref.compilers import inductor

        inductor._KERNEL_DECLARATION = re.compile(r"^(\w+) = a declaration no wrapper holds\(", re.MULTILINE)
    elif fault == "traced_code":
        import torch._guards

        del torch._guards.TracingContext.get_traced_code
    elif fault == "cache_entries":
        import torch._dynamo.eval_frame

        del torch._dynamo.eval_frame._debug_get_cache_entry_list
    elif fault.startswith("seam:"):
        from torchair_ref import _torch

        name = fault.removeprefix("seam:")
        getattr(_torch, name)  # only an accessor the seam has

        def missing(*_args, **_kwargs):
            raise AttributeError(f"{name} is missing from this torch (broken on purpose)")

        setattr(_torch, name, missing)


def same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return a.dtype == b.dtype and a.shape == b.shape and a.device == b.device and (
            a.device.type == "meta" or torch.allclose(a.float(), b.float(), atol=1e-2 if a.dtype.itemsize < 4 else 1e-5)
        )
    return a == b


def main() -> None:
    job = process.read_job()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    if job.get("break"):
        inject(job["break"])
    source = load_source(job["source"])
    config = torchair_ref.CompilerConfig()
    config.debug.run_eagerly = job.get("run_eagerly", True)
    options = {"config": config, "dynamic": job.get("dynamic", True)}
    report: dict = {"calls": [], "errors": []}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.manual_seed(0)
        models = [source.build(options) for _ in range(job.get("instances", 1))]
        for model in models:
            model.train(job.get("train", False))
            if job.get("to_dtype"):
                model.to(getattr(torch, job["to_dtype"]))
        model = models[0]
        if job.get("threads"):
            x = torch.randn(4, 8)
            results: list = [None] * job["threads"]
            barrier = threading.Barrier(job["threads"])

            def first(i: int) -> None:
                barrier.wait()
                results[i] = model.cached(x)

            threads = [threading.Thread(target=first, args=(i,)) for i in range(job["threads"])]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            report["threads_same"] = all(same(r, model.run(x)) for r in results)
        for spec in job.get("calls", [{}]):
            x = torch.randn(*spec.get("shape", (4, 8))).to(getattr(torch, spec.get("dtype", "float32")))
            x = x.to(spec.get("device", "cpu"))
            target = models[spec.get("instance", 0)]
            try:
                got = target.cached(x)
            except Exception as exc:  # noqa: BLE001 - reported to the test
                report["errors"].append(f"{type(exc).__name__}: {exc}")
                continue
            with torch.no_grad():
                report["calls"].append(same(got, target.run(x)))
        for other in models[1:]:
            other.cached(torch.randn(4, 8))
        report["globals_left"] = sorted(n for n in vars(source) if n.startswith("__torchair_ref"))
    report["unique_graphs"] = process.traced()["unique_graphs"]
    report["warnings"] = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    process.reply(report)


if __name__ == "__main__":
    main()
