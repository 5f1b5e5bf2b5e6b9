"""Per-call overhead of the cached callable against calling the compiled graph directly.

The cached callable is the implementation's warm `cache_compile` result (loaded from a cache a cold run left). The
*direct graph* is the same method's inference graph compiled by the same graph compiler (Inductor, or the ATen
graph itself for `debug.run_eagerly`) and called as Inductor's generated `call(args)` (resp. the graph module) with
the flat inputs Dynamo lifted: no Dynamo guards, no AOTAutograd runtime wrappers, no argument flattening. Their
difference is what the cached callable costs per call beyond the graph: argument unpacking, grad-mode handling,
input checks. On `tiny` the graph itself takes a few microseconds, so the overhead dominates.

Timing alternates blocks of calls of the two subjects, so that drift of the machine hits both alike; the figure is
the difference of the medians of the per-block per-call times (the minimums are kept too).
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any


def direct_graph(method: Callable, args: tuple, kwargs: dict, *, compiler: str, dynamic: bool) -> Callable[[], Any]:
    """The method's inference graph compiled by `compiler` ("inductor" or "eager"), as a zero-argument call.

    Call it with grad mode off (`torch.no_grad()` around the whole timing): the graph is an inference graph.
    """
    import torch
    from torch._functorch.aot_autograd import aot_module_simplified

    captured: dict[str, Any] = {}

    def backend(gm: Any, example_inputs: list) -> Any:
        captured["inputs"] = list(example_inputs)
        if compiler == "inductor":
            from torch._inductor.compile_fx import compile_fx, compile_fx_inner

            def inner(aten_gm: Any, inputs: list, **options: Any) -> Any:
                output = compile_fx_inner(aten_gm, inputs, **options)
                captured["call"] = output.current_callable
                captured["graph_inputs"] = len(inputs)
                return output

            return compile_fx(gm, example_inputs, inner_compile=inner)

        def forward(aten_gm: Any, inputs: list) -> Any:
            forward = aten_gm.forward  # past nn.Module.__call__, as a cache's graph is called
            captured["call"] = lambda flat: forward(*flat)
            captured["graph_inputs"] = len(inputs)
            return aten_gm

        return aot_module_simplified(gm, example_inputs, fw_compiler=forward, keep_inference_input_mutations=True)

    with torch.no_grad():
        expected = torch.compile(method, backend=backend, fullgraph=True, dynamic=dynamic)(*args, **kwargs)
    flat, call = captured["inputs"], captured["call"]
    if captured["graph_inputs"] != len(flat):
        raise RuntimeError(f"AOTAutograd changed the graph's inputs ({len(flat)} -> {captured['graph_inputs']})")

    def direct() -> Any:
        return call(list(flat))

    with torch.no_grad():
        got = direct()
    got = got[0] if isinstance(got, (list, tuple)) and len(got) == 1 else got
    if not torch.equal(got, expected):
        raise RuntimeError("the directly called graph's output differs from the compiled method's")
    return direct


def compare(subjects: dict[str, Callable[[], Any]], *, blocks: int = 30, calls: int = 1000,
            warmup: int = 200) -> dict[str, dict[str, float]]:
    """Per-call seconds of each zero-argument call, timed in alternating blocks: {name: {median, min}}."""
    for call in subjects.values():
        for _ in range(warmup):
            call()
    per_call: dict[str, list[float]] = {name: [] for name in subjects}
    clock = time.perf_counter
    for _ in range(blocks):
        for name, call in subjects.items():
            start = clock()
            for _ in range(calls):
                call()
            per_call[name].append((clock() - start) / calls)
    return {name: {"median": sorted(t)[len(t) // 2], "min": min(t)} for name, t in per_call.items()}


def measure(cached: Callable, built: Any, *, compiler: str, dynamic: bool, **timing: Any) -> dict[str, Any]:
    """The `overhead` worker subject: the warm cached callable `cached` of `built`'s method against the same graph
    called directly (`direct_graph`); `timing` goes to `compare`."""
    import torch

    args, kwargs = built.args, built.kwargs
    cached(*args, **kwargs)
    warm = "torch._dynamo" not in sys.modules
    direct = direct_graph(built.bound(), args, kwargs, compiler=compiler, dynamic=dynamic)
    with torch.no_grad():  # the cached callable switches grad mode itself, as it must; the direct graph need not
        timed = compare({"cached": lambda: cached(*args, **kwargs), "direct": direct}, **timing)
    return {
        "cached_warm": warm,
        "compiler": compiler,
        "cached_call_s": timed["cached"]["median"],
        "cached_call_min_s": timed["cached"]["min"],
        "direct_call_s": timed["direct"]["median"],
        "direct_call_min_s": timed["direct"]["min"],
        "overhead_s": timed["cached"]["median"] - timed["direct"]["median"],
        "overhead_min_s": timed["cached"]["min"] - timed["direct"]["min"],
    }
