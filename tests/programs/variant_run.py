"""A fresh process for the variant and copy tests (CC-23, CC-24): build `Model`, call it, report.

Usage: python -m tests.programs.variant_run, job in and report out as `torchair_conformance.process` says. Job keys:
cache_dir, threads (`torch.set_num_threads`), ge_cache, inductor (the true default config; else the fast eager
compiler), pickle_out (after the call, pickle the module to this path), pickle_in (call the module unpickled from
this path instead of a new one). The report: whether the output equals the eager method's, Dynamo's graph count,
the warnings.
"""
from __future__ import annotations

import logging
import pickle
import sys
import warnings

import torch

import torchair_ref
from torchair_conformance import process


class Model(torch.nn.Module):
    """The README's pattern: the cached method held by the module."""

    def __init__(self, cache_dir: str, ge_cache: bool, inductor: bool) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
        config = torchair_ref.CompilerConfig()
        config.mode = "max-autotune"
        config.debug.run_eagerly = not inductor
        self.cached = torchair_ref.inference.cache_compile(self.run, config=config, cache_dir=cache_dir,
                                                           ge_cache=ge_cache)

    def run(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x)) * 2


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
            model = Model(job["cache_dir"], job.get("ge_cache", False), job.get("inductor", False))
        x = torch.randn(4, 8)
        got = model.cached(x)
        with torch.no_grad():
            equal = bool(torch.allclose(got, model.run(x), atol=1e-5))
        if job.get("pickle_out"):
            with open(job["pickle_out"], "wb") as handle:
                pickle.dump(model, handle)
    from torch._dynamo.utils import counters

    process.reply({"equal": equal, "unique_graphs": int(counters["stats"]["unique_graphs"]),
                   "warnings": [str(w.message) for w in caught if not issubclass(w.category, DeprecationWarning)]})


if __name__ == "__main__":
    main()
