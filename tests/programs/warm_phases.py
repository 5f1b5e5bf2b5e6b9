"""Benchmark (not a test): where a zoo model's warm first call spends its time (SPEC CC-14, CC-21; issue 29 item 7).

Usage: `python -m tests.programs.warm_phases MODEL [MODEL ...] [--fast] [--rounds N] [--again N]` (zoo models, plain
pattern; needs the zoo's packages). Per model: one cold process writes the cache into a temporary folder
(`torchair_conformance.zoo.run`), then N fresh processes (default 5) each build the model and take the warm start's
steps one at a time, timing each (the steps of `CachedFunction._warm_start`, which checks the guards before it
loads the graph; here the graph comes first):

- `path`: the cache path (`paths.resolve`: the module's structure digest);
- `read`: the file read, its seal checked and split into variants;
- `record`: `record.checked`: the record validated, the environment, the method's code digest and the digest of
  every traced function's live code and source lines compared (code identity, CC-21 f);
- `module_guards`: the guards the per-call check leaves out (a module's tensors), checked once at load
  (`loading.load_time_failure`, as `loading.guards` calls it);
- `graph`: the compiled graph loaded (`compilers.load`: kernels, wrapper);
- `wrap`: Dynamo's bytecode rebound to the loaded graph (`bytecode.rebuild`);
- `guard_code`: the per-call guard function made (`guard_check.guarded_method`), here around a no-op (its code
  loaded from the record's stored check when its outline is the same, as the warm start does);
- `guards_first`: that function called once with the cold inputs: every per-call guard's first evaluation;
- `first_call` and `repeat`: the warm function (the guards around the graph, as the warm start builds it) called
  with the cold inputs, twice.

`guard_work` is record + module_guards + guard_code + guards_first: what the warm start's checks (code identity,
module guards, per-call guards) cost its first call. With `--again N`, each process then does that work N more
times (`again_guard_work`, their median): what is left against `guard_work` is the process's first touch of the code
and data. Prints one JSON object per model with the medians (ms) and every round's values.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
from typing import Any

from torchair_conformance import process

PHASES = ("path", "read", "record", "module_guards", "graph", "wrap", "guard_code", "guards_first", "first_call",
          "repeat")


def phases(model: str, cache_dir: str, fast: bool, again: int = 0) -> dict[str, float]:
    """One warm start of `model` from `cache_dir`, phase by phase, in this process (ms)."""
    import torch

    import torchair_ref
    from torchair_conformance.zoo import patterns
    from torchair_ref import compilers
    from torchair_ref.inference import (
        artifact,
        bytecode,
        guard_check,
        guard_values,
        inputs,
        loading,
        paths,
        record,
        variants,
    )

    config = torchair_ref.CompilerConfig()
    if fast:
        config.debug.run_eagerly = True
    torch.manual_seed(0)
    built = patterns.build(model, "plain", torchair_ref.inference.cache_compile, {"config": config,
                                                                                  "cache_dir": cache_dir})
    step = patterns.script(built, "cold")[0]
    cached = built.cached["_run"]
    method = cached._method
    times: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        times[name] = (now - clock) * 1000
        clock = now

    _, model_info, path = paths.resolve(method, config, dynamic=cached._dynamic, ge_cache=cached._ge_cache,
                                        cache_dir=cache_dir, ranks=cached._ranks)
    lap("path")
    payload = variants.split(artifact.read(path))[0]
    lap("read")
    kept = contextlib.ExitStack()  # as the warm start does, from the record's check to the guards' first call
    kept.enter_context(guard_values.digests_kept())
    loaded = record.checked(payload, method, model_info)
    lap("record")
    function = method.__func__
    module_globals = bytecode.ModuleView(function.__globals__)
    module_globals.update(bytecode.injected_objects(loaded.globals))
    stored = loaded.extra.get("guard_code")
    failed = loading.load_time_failure(loaded, method, module_globals)
    if failed is not None:
        raise SystemExit(f"{model}: the module guards fail: {failed}")
    lap("module_guards")
    kernel_dir = os.path.join(os.path.dirname(path), artifact.KERNEL_DIR)
    boxed = compilers.load(loaded.graph, kernel_dir, inputs.guaranteed_layouts(loaded.inputs))
    lap("graph")

    def mismatch(found: Any) -> None:
        raise SystemExit(f"{model}: the input check fails: {found}")

    graph = inputs.GraphInputCheck(boxed, loaded.inputs, mismatch)
    rebuilt, graph_name = bytecode.rebuild(bytecode.decode(loaded.bytecode), loaded.globals, graph._checked_call,
                                           function)
    graph.bind(rebuilt.__globals__, graph_name)
    lap("wrap")
    checks = types.MethodType(guard_check.guarded_method(function, _nothing, loaded.guards, mismatch, module_globals,
                                                         stored=stored), method.__self__)
    lap("guard_code")
    with torch.no_grad():
        checks(*step.args, **step.kwargs)
    kept.close()
    lap("guards_first")
    warm = types.MethodType(guard_check.guarded_method(function, rebuilt, loaded.guards, mismatch, module_globals,
                                                       stored=stored), method.__self__)
    clock = time.perf_counter()
    with torch.no_grad():
        warm(*step.args, **step.kwargs)
        lap("first_call")
        warm(*step.args, **step.kwargs)
        lap("repeat")
    if again:
        times["again_guard_work"] = statistics.median(
            _guard_work_again(payload, method, model_info, module_globals, step) for _ in range(again))
    if process.traced()["unique_graphs"]:
        raise SystemExit(f"{model}: Dynamo traced in the warm process")
    return times


def _guard_work_again(payload: dict[str, Any], method: Any, model_info: str, module_globals: Any, step: Any) -> float:
    """The guard work (record, module guards, guard code, first evaluation) once more in this process (ms): a fresh
    `digests_kept` block and an empty code-digest memory, as a warm start has; what the process remembers beyond
    those (parsed sources, the CPU fingerprint, interned names, warm caches) it keeps. Against the first time, what
    is left is the first touch of this code and data."""
    import torch

    from torchair_ref.inference import guard_check, guard_values, loading, record

    guard_values._CODE_DIGESTS.clear()  # noqa: SLF001 - a benchmark: each round digests code as a fresh process
    start = time.perf_counter()
    with guard_values.digests_kept():
        loaded = record.checked(payload, method, model_info)
        stored = loaded.extra.get("guard_code")
        loading.load_time_failure(loaded, method, module_globals)
        checks = types.MethodType(guard_check.guarded_method(method.__func__, _nothing, loaded.guards, _nothing,
                                                             module_globals, stored=stored), method.__self__)
        with torch.no_grad():
            checks(*step.args, **step.kwargs)
    return (time.perf_counter() - start) * 1000


def _nothing(*args: Any, **kwargs: Any) -> None:
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.programs.warm_phases", description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--fast", action="store_true", help="the reference's fast graph compiler (no Inductor)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--again", type=int, default=0, metavar="N",
                        help="also the guard work N more times in each process (median as again_guard_work)")
    parser.add_argument("--phase-of", nargs=2, metavar=("MODEL", "CACHE_DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.phase_of:
        print(json.dumps(phases(args.phase_of[0], args.phase_of[1], args.fast, args.again)))
        return 0
    from torchair_conformance.zoo import run

    for model in args.models:
        with tempfile.TemporaryDirectory(prefix="warm-phases-") as folder:
            cold = run.run(model, "plain", config=run.FAST if args.fast else (), phases=("cold",), cache_dir=folder)
            if cold.cold.get("error") or not cold.files:
                print(json.dumps({"model": model, "error": cold.problems()}))
                continue
            rounds = []
            for _ in range(args.rounds):
                command = [sys.executable, "-m", "tests.programs.warm_phases", model, "--phase-of", model, folder,
                           "--again", str(args.again)]
                out = subprocess.run(command + (["--fast"] if args.fast else []), capture_output=True, text=True,
                                     check=False, timeout=900)
                if out.returncode != 0:
                    print(json.dumps({"model": model, "error": (out.stdout + out.stderr)[-2000:]}))
                    break
                rounds.append(json.loads(out.stdout.strip().splitlines()[-1]))
            if len(rounds) < args.rounds:
                continue
            for r in rounds:
                r["guard_work"] = r["record"] + r["module_guards"] + r["guard_code"] + r["guards_first"]
            keys = (*PHASES, "guard_work", *(("again_guard_work",) if args.again else ()))
            medians = {k: round(statistics.median(r[k] for r in rounds), 2) for k in keys}
            print(json.dumps({"model": model, "fast": args.fast, "median_ms": medians, "rounds": rounds}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
