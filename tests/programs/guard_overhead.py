"""Benchmark (not a test): what the warm call's guard checks cost per call, per guard kind (SPEC CC-21; issue 30).

Usage: `python -m tests.programs.guard_overhead tiny` (the bench's seed model) or `... hf:<zoo model>` (a zoo
model's plain pattern; needs the zoo's packages). The model's cached method is traced once by Dynamo as the
reference traces it (`fullgraph=True`, the guard values from before the call), its guards translated by the
registry (a guard no kind translates is counted as refused, not timed), then, in this process, the warm call's
generated check (`guard_check.guarded_method`) is built around a function that does nothing, for every kind alone
and for all of them, and called with the traced call's arguments. Per kind: the number of checks and the time per
call beyond the same wrapper with no check (median of blocks of calls, in microseconds). For comparison,
`dynamo_us`: what Dynamo's own guards for the same trace cost per call in this process (its C++ guard tree's
`check` over the call's locals, grad mode as traced), the figure a plain `torch.compile` pays on every call. Prints
one JSON object.
"""
from __future__ import annotations

import argparse
import inspect
import json
import statistics
import sys
import time
import types
from collections import Counter
from typing import Any

import torch


def _traced(name: str) -> tuple[torch.nn.Module, types.FunctionType, tuple, dict]:
    if name.startswith("hf:"):
        from torchair_conformance.zoo import patterns

        built = patterns.build(name[3:], "plain", None, {})
        step = patterns.script(built, "cold")[0]
        return built.module, type(built.module)._run, step.args, step.kwargs
    from torchair_conformance.bench import models

    built = models.build(name)
    return built.module, getattr(type(built.module), built.method), built.args, built.kwargs


def _specs(module: torch.nn.Module, function: types.FunctionType, args: tuple, kwargs: dict,
           dynamic: bool) -> tuple[list, list[str], Any]:
    from torchair_ref.inference import guard_read

    sources: list[str] = []

    def backend(gm: torch.fx.GraphModule, example_inputs: list) -> Any:
        for node in gm.graph.nodes:
            grapharg = node.meta.get("grapharg") if node.op == "placeholder" else None
            if grapharg is not None and grapharg.source is not None:
                source = grapharg.source.name
                sources.append(source() if callable(source) else source)
        return gm.forward

    traced = types.FunctionType(function.__code__.replace(), function.__globals__, function.__name__,
                                function.__defaults__, function.__closure__)
    before = guard_read.Before()
    compiled = torch.compile(types.MethodType(traced, module), backend=backend, fullgraph=True, dynamic=dynamic,
                             options={"guard_filter_fn": before})
    with torch.no_grad():
        compiled(*args, **kwargs)
    refused: list[str] = []
    specs = guard_read.guard_specs(traced.__code__, traced, module, args, kwargs, frozenset(sources), before.values,
                                   refused)
    return specs, refused, traced


def _per_call(call: Any, args: tuple, kwargs: dict, blocks: int, calls: int) -> float:
    times = []
    for _ in range(blocks):
        start = time.perf_counter()
        for _ in range(calls):
            call(*args, **kwargs)
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def _dynamo_us(traced: types.FunctionType, module: torch.nn.Module, args: tuple, kwargs: dict, blocks: int,
               calls: int) -> float:
    """Dynamo's guard tree for `traced`'s one compiled version, checked over the call's locals, per call."""
    from torchair_ref import _torch

    manager = _torch.cache_entries(traced.__code__)[0].guard_manager
    frame_locals = dict(inspect.signature(traced).bind(module, *args, **kwargs).arguments)
    with torch.no_grad():
        if not manager.check(frame_locals):
            raise AssertionError(f"the traced call fails Dynamo's own guards: {manager.check_verbose(frame_locals)}")
        return _per_call(manager.check, (frame_locals,), {}, blocks, calls)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="tiny, gpt-small, or hf:<zoo model> (e.g. hf:gpt2)")
    parser.add_argument("--dynamic", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--blocks", type=int, default=15)
    parser.add_argument("--calls", type=int, default=2000)
    options = parser.parse_args(argv)
    torch.set_num_threads(1)
    from torchair_ref.inference import guard_check

    module, function, args, kwargs = _traced(options.model)
    specs, refused, traced = _specs(module, function, args, kwargs, options.dynamic)

    def noop(*_: Any, **__: Any) -> None:
        return None

    def failed(spec: Any, *_: Any, **__: Any) -> None:
        named = "s (each holds alone)" if spec is None else f" {spec.guard}: {spec.text}"
        raise AssertionError(f"the traced call fails its own guard{named}")

    def wrapped(subset: list) -> Any:
        return types.MethodType(guard_check.guarded_method(function, noop, subset, failed, function.__globals__),
                                module)

    base = _per_call(wrapped([]), args, kwargs, options.blocks, options.calls)
    kinds = Counter(spec.check for spec in specs)
    result: dict[str, Any] = {"model": options.model, "torch": torch.__version__, "guards": len(specs),
                              "refused": len(refused), "refused_examples": refused[:3], "per_kind_us": {}}
    for check, count in sorted(kinds.items()):
        subset = [s for s in specs if s.check == check]
        cost = _per_call(wrapped(subset), args, kwargs, options.blocks, options.calls) - base
        result["per_kind_us"][check] = {"checks": count, "us": round(cost * 1e6, 3)}
    result["all_us"] = round((_per_call(wrapped(specs), args, kwargs, options.blocks, options.calls) - base) * 1e6, 3)
    result["dynamo_us"] = round(_dynamo_us(traced, module, args, kwargs, options.blocks, options.calls) * 1e6, 3)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
