"""Run a zoo model cold, then warm, then eager, each in a fresh process (SPEC CC-14), and say what happened.

    python -m torchair_conformance.zoo.run gpt2 [--pattern served] [--impl torchair_ref] [--fast] [--json]

The cold process compiles into an empty cache folder, the warm process starts from what it left, the eager process
runs the cold steps without any implementation (its time to first output is the baseline). `report` holds the three
workers' results (`torchair_conformance.workers.zoo`) and `verdict` the judgement every zoo test makes: the cold run
wrote a file and warned nothing "is not cached", the warm run traced 0 graphs, repeated the cold outputs bit for bit
and matched eager (float32: rtol 1e-3, atol 1e-4) on every step. No torch is imported here.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from torchair_conformance import process
from torchair_conformance.impl import ENV_VAR
from torchair_conformance.zoo import catalog

__all__ = ["ZooRun", "run", "verdict", "cache_files", "main", "FAST"]

#: the reference's fast graph compiler (no Inductor): `--fast`
FAST = (("debug.run_eagerly", True),)
#: a cold Inductor compile of the largest zoo model on a loaded 2-core machine, with room to spare
TIMEOUT_S = 900


@dataclass
class ZooRun:
    """One model and pattern run cold, warm and eager: the workers' results and the files the cold run wrote."""

    model: str
    pattern: str
    impl: str
    cold: dict[str, Any]
    warm: dict[str, Any] | None = None
    eager: dict[str, Any] | None = None
    files: list[str] = field(default_factory=list)
    #: the warm steps' variant (`patterns.VARIANTS`): calls the cold trace's guards must reject (CC-21)
    variant: str | None = None

    def problems(self) -> list[str]:
        """Everything that keeps this run from being a working warm start (empty: none)."""
        return verdict(self)

    def summary(self) -> dict[str, Any]:
        """The row the survey and the CLI print."""
        warm = self.warm or {}
        eager = self.eager or {}
        diffs = [s.get("max_abs_diff") for s in warm.get("steps", []) if s.get("max_abs_diff") is not None]
        return {
            "model": self.model, "pattern": self.pattern, "cached": bool(self.files) and not self.cold["not_cached"],
            "files": len(self.files), "not_cached": sorted(set(self.cold["not_cached"] + warm.get("not_cached", []))),
            "warm_graphs": warm.get("unique_graphs"), "warm_frames": warm.get("frames_total"),
            "max_abs_diff": max(diffs) if diffs else None,
            "kv_max_abs_diff": warm.get("kv_max_abs_diff"),
            "cold_ttfo_s": self.cold.get("ttfo_s"), "cold_first_call_s": self.cold.get("first_call_s"),
            "warm_ttfo_s": warm.get("ttfo_s"), "eager_ttfo_s": eager.get("ttfo_s"),
            "warm_over_eager": (warm["ttfo_s"] / eager["ttfo_s"]) if warm.get("ttfo_s") and eager.get("ttfo_s")
            else None,
            "warm_first_call_extra_s": first_call_extra(warm),
            "errors": [f"{r['phase']}: {r['error']['type']}: {r['error']['message'][:300]}"
                       for r in (self.cold, warm, eager) if r and r.get("error")],
            "problems": self.problems(),
        }


def first_call_extra(warm: dict[str, Any]) -> float | None:
    """The warm first call's time beyond the load (CC-20's record) and a repeat of the same call: the first call's
    own checks (guards, the input check) and first-run costs. None where the run has no load record or repeat."""
    if warm.get("load_s") is None or warm.get("repeat_s") is None or warm.get("first_call_s") is None:
        return None
    return max(0.0, warm["first_call_s"] - warm["load_s"] - warm["repeat_s"])


def verdict(zoo_run: ZooRun) -> list[str]:
    """What a zoo test asserts, as a list of failures (empty: the warm start works). With a `variant` the warm
    process may trace (CC-21 allows a retrace for calls the cold guards reject); every output must still match eager."""
    problems = []
    for result in (zoo_run.cold, zoo_run.warm, zoo_run.eager):
        if result is not None and result.get("error"):
            problems.append(f"the {result['phase']} process raised {result['error']['type']}: "
                            f"{result['error']['message'][:500]}")
    if zoo_run.cold.get("not_cached"):
        problems.append(f"the cold process warned: {zoo_run.cold['not_cached'][0][:500]}")
    if not zoo_run.files:
        problems.append("the cold process wrote no cache file")
    warm = zoo_run.warm
    if warm is None:
        return problems
    if warm.get("not_cached"):
        problems.append(f"the warm process warned: {warm['not_cached'][0][:500]}")
    if zoo_run.variant is None and (warm.get("unique_graphs") or warm.get("frames_total")):
        problems.append(f"CC-14: the warm process traced {warm.get('unique_graphs')} graph(s) "
                        f"({warm.get('frames_total')} frame(s))")
    cold_digests = [s.get("digest") for s in zoo_run.cold.get("steps", [])]
    warm_digests = [s.get("digest") for s in warm.get("steps", [])][:len(cold_digests)]
    if cold_digests and warm_digests and warm_digests != cold_digests:
        problems.append("CC-14: the warm outputs of the cold steps differ bitwise from the cold run's")
    for step in warm.get("steps", []):
        if step.get("close") is False:
            problems.append(f"step {step['label']!r}: max |warm - eager| = {step['max_abs_diff']:.3g} "
                            "(float32: rtol 1e-3, atol 1e-4)")
    if warm.get("kv_max_abs_diff") not in (None, 0.0) and warm["kv_max_abs_diff"] > 1e-4:
        problems.append(f"the KV cache the warm run filled differs from eager's by {warm['kv_max_abs_diff']:.3g}")
    return problems


def cache_files(root: str) -> list[str]:
    """Every `compiled_module` under `root`, relative to it, sorted."""
    found = []
    for folder, _, files in os.walk(root):
        found += [os.path.relpath(os.path.join(folder, f), root) for f in files if f == "compiled_module"]
    return sorted(found)


def _worker(job: dict[str, Any], impl: str, cwd: str, env: Mapping[str, str] | None) -> dict[str, Any]:
    job = {**job, "impl": impl, "spawned_at": time.time()}
    child = dict(env) if env is not None else process.child_env([], {"TORCHAIR_CACHE_HOME": None, ENV_VAR: impl})
    return process.run("torchair_conformance.workers.zoo", job, cwd=cwd, env=child, timeout=TIMEOUT_S).result


def run(model: str, pattern: str = "plain", *, impl: str = "torchair_ref", config: Sequence[tuple[str, Any]] = (),
        phases: Sequence[str] = ("cold", "warm", "eager"), env: Mapping[str, str] | None = None,
        cache_dir: str | None = None, variant: str | None = None) -> ZooRun:
    """`model` with `pattern`: a cold process (empty cache folder), a warm one, an eager one, one at a time.

    The cache folder is `cache_dir` if given (kept), else a temporary one (removed). A phase left out of `phases`
    is not run (the warm phase needs the cold one). `env` is the workers' whole environment (the suite passes
    `harness.worker_env(impl)`); by default this process's, with this package importable and `impl` selected."""
    if pattern not in catalog.patterns_of(model):
        raise ValueError(f"zoo model {model} has no pattern {pattern!r}; it has "
                         f"{', '.join(catalog.patterns_of(model))}")
    with tempfile.TemporaryDirectory(prefix="zoo-run-") as scratch:
        root = cache_dir or os.path.join(scratch, "cache")
        job = {"model": model, "pattern": pattern, "cache_dir": root, "config": [list(o) for o in config]}
        cold = _worker({**job, "phase": "cold"}, impl, scratch, env)
        result = ZooRun(model, pattern, impl, cold, files=cache_files(root), variant=variant)
        if "warm" in phases:
            result.warm = _worker({**job, "phase": "warm", "variant": variant}, impl, scratch, env)
        if "eager" in phases:
            result.eager = _worker({**job, "phase": "eager"}, impl, scratch, env)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torchair_conformance.zoo.run", description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="+", choices=catalog.NAMES, metavar="MODEL",
                        help=f"zoo models: {', '.join(catalog.NAMES)}")
    parser.add_argument("--pattern", choices=catalog.PATTERNS, default="plain")
    parser.add_argument("--impl", default=os.environ.get(ENV_VAR, "torchair_ref"))
    parser.add_argument("--fast", action="store_true", help="the reference's fast graph compiler (no Inductor)")
    parser.add_argument("--json", action="store_true", help="print each run's summary as one JSON line")
    args = parser.parse_args(argv)
    failed = 0
    for model in args.models:
        if args.pattern not in catalog.patterns_of(model):
            print(f"{model}: no {args.pattern} pattern (it has {', '.join(catalog.patterns_of(model))})")
            continue
        summary = run(model, args.pattern, impl=args.impl, config=FAST if args.fast else ()).summary()
        failed += bool(summary["problems"])
        if args.json:
            print(json.dumps(summary), flush=True)
            continue
        print(f"{model} [{args.pattern}]: cached {summary['cached']}, warm graphs {summary['warm_graphs']}, "
              f"max |warm - eager| {summary['max_abs_diff']}, cold {_s(summary['cold_ttfo_s'])}, "
              f"warm {_s(summary['warm_ttfo_s'])}, eager {_s(summary['eager_ttfo_s'])}", flush=True)
        for problem in summary["problems"]:
            print(f"  - {problem}")
    return 1 if failed else 0


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


if __name__ == "__main__":
    sys.exit(main())
