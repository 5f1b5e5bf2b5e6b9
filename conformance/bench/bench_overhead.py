"""Per-call overhead as pytest-benchmark benchmarks: the warm cached callable against the graph called directly.

On `tiny`, in this process: a cold `cache_compile` writes the cache, a second instance of the model loads it
(warm, no tracing); the direct graph is the same method compiled by the same graph compiler (see `overhead`). Both
run with grad mode off; compare the two in the group's table (`cached` minus `direct` is the overhead).
"""
from __future__ import annotations

from typing import Any, Callable

import pytest

from conformance.bench import harness, models, overhead, worker


@pytest.fixture(scope="module")
def subjects(bench_options: harness.Options, tmp_path_factory: Any) -> dict[str, Callable[[], Any]]:
    import torch

    opts = bench_options
    if opts.threads:
        torch.set_num_threads(opts.threads)
    impl = worker.import_impl(opts.impl)
    config = worker.impl_config(impl, {"mode": opts.mode, "run_eagerly": opts.run_eagerly})
    options = {"config": config, "dynamic": opts.dynamic, "cache_dir": str(tmp_path_factory.mktemp("cache")),
               "ge_cache": opts.ge_cache}
    cold = models.build("tiny", device=opts.device)
    impl.inference.cache_compile(cold.bound(), **options)(*cold.args, **cold.kwargs)
    built = models.build("tiny", device=opts.device)
    cached = impl.inference.cache_compile(built.bound(), **options)
    args, kwargs = built.args, built.kwargs
    cached(*args, **kwargs)
    direct = overhead.direct_graph(built.bound(), args, kwargs, compiler=opts.compiler, dynamic=opts.dynamic)
    return {"cached": lambda: cached(*args, **kwargs), "direct": direct}


@pytest.mark.parametrize("subject", ["cached", "direct"])
def test_per_call(benchmark: Any, subjects: dict[str, Callable[[], Any]], bench_options: harness.Options,
                  subject: str) -> None:
    """Per-call latency of one subject on tiny (overhead dominates there)."""
    import torch

    benchmark.group = f"per-call: {bench_options.impl} tiny ({bench_options.compiler} graph)"
    with torch.no_grad():
        benchmark.pedantic(subjects[subject], rounds=200, iterations=200, warmup_rounds=10)
