"""A fresh process for the tests: build a model, call its cache_compile'd methods, reply with one JSON report.

Usage: python -m tests.programs.cache_run, job in and report out as `torchair_conformance.process` says. Job keys: model
("seed": the zoo's seed example, "mlp" or "closure"), seed, calls (list of {"method": ..., "batch": ...}),
run_eagerly, mode, dynamic, ge_cache, cache_dir. The report holds output digests, Dynamo's counters read after the
calls, which compiler modules were imported, and the warnings issued.
"""
from __future__ import annotations

import hashlib
import logging
import sys
import warnings

import torch

import torchair_ref
from torchair_conformance import models, process
from torchair_conformance.models import InputMeta


class SeedModel(models.SeedModel):
    """The zoo's seed example as TorchAir's documentation uses it: `prompt` and `decode` cache_compile'd."""

    def __init__(self, options: dict) -> None:
        super().__init__()
        self.cached_prompt = torchair_ref.inference.cache_compile(self.prompt, **options)
        self.cached_decode = torchair_ref.inference.cache_compile(self.decode, **options)

    def forward(self, x: InputMeta, kv: list[torch.Tensor]) -> torch.Tensor:
        if x.is_prompt:
            return self.cached_prompt(x, kv)
        return self.cached_decode(x, kv)


SCALE = torch.full((16,), 0.5)  # a module-level tensor the cached method reads (rebound on warm start)


class MlpModel(torch.nn.Module):
    """Linear/LayerNorm/GELU with a residual, keyword-only input, a plain tensor attribute and tuple outputs."""

    def __init__(self, options: dict) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.norm = torch.nn.LayerNorm(32)
        self.fc2 = torch.nn.Linear(32, 16)
        self.register_buffer("bias2", torch.linspace(-1, 1, 16))
        self.offset = torch.ones(16)  # not a parameter or buffer
        self.cached = torchair_ref.inference.cache_compile(self.run, **options)

    def run(self, x: torch.Tensor, *, steps: int = 1):
        h = torch.nn.functional.gelu(self.norm(self.fc1(x)))
        y = self.fc2(h) + x + self.bias2 + self.offset * SCALE
        return y, (x.shape, steps)


def closure_model(options: dict) -> torch.nn.Module:
    """A method that reads a tensor from its closure (rebound on warm start: CC-18)."""
    shift = torch.full((16,), 0.25)

    class ClosureModel(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(16, 16)
            self.cached = torchair_ref.inference.cache_compile(self.run, **options)

        def run(self, x: torch.Tensor, *, steps: int = 1) -> torch.Tensor:
            return self.fc(x) + shift * steps

    return ClosureModel()


def build(job: dict) -> tuple[torch.nn.Module, dict]:
    config = torchair_ref.CompilerConfig()
    config.debug.run_eagerly = job.get("run_eagerly", True)
    config.mode = job.get("mode", "max-autotune")
    options = {"config": config, "dynamic": job.get("dynamic", True), "ge_cache": job.get("ge_cache", False)}
    if job.get("cache_dir"):
        options["cache_dir"] = job["cache_dir"]
    for rank in ("tp_rank", "pp_rank"):
        if job.get(rank) is not None:
            options[rank] = job[rank]
    torch.manual_seed(job.get("seed", 0))
    model = {"seed": SeedModel, "mlp": MlpModel, "closure": closure_model}[job.get("model", "seed")](options)
    return model.eval(), options


def call(model: torch.nn.Module, spec: dict, seed: int):
    generator = torch.Generator().manual_seed(seed + spec.get("batch", 2))
    batch = spec.get("batch", 2)
    if isinstance(model, SeedModel):
        x = InputMeta(torch.randn(batch, 2, generator=generator), spec["method"] == "prompt")
        return model(x, [torch.randn(batch, 2, generator=generator)])
    return model.cached(torch.randn(batch, 16, generator=generator), steps=spec.get("steps", 1))


def digest(value) -> object:
    if isinstance(value, torch.Tensor):
        raw = bytes(value.detach().contiguous().reshape(-1).view(torch.uint8).tolist())
        return {"sha256": hashlib.sha256(raw).hexdigest(),
                "shape": list(value.shape), "requires_grad": value.requires_grad, "grad_fn": value.grad_fn is not None}
    if isinstance(value, (tuple, list)):
        return [digest(v) for v in value]
    return value


def main() -> None:
    job = process.read_job()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model, _ = build(job)
        outputs = [digest(call(model, spec, job.get("seed", 0))) for spec in job.get("calls", [{"method": "prompt"}])]
    imported = {name: name in sys.modules for name in ("torch._dynamo", "torch._inductor", "sympy")}
    traced = process.traced()
    report = {
        "outputs": outputs,
        "unique_graphs": traced["unique_graphs"],
        "frames_total": traced["frames_total"],
        "imported": imported,
        "warnings": [str(w.message) for w in caught],
    }
    process.reply(report)


if __name__ == "__main__":
    main()
