"""Cold and warm starts as pytest-benchmark benchmarks: each round a fresh worker process (`benchmark.pedantic`).

The benchmark's own time is the parent's wall time around the process, which ends right after its first output
(`first_output_only`): time to first output plus interpreter exit. The worker's phases (BE-2) go to `extra_info`
as medians, with whether any warm run traced.
"""
from __future__ import annotations

import itertools
from typing import Any

import pytest

from conformance.bench import harness
from conformance.report import stats

_counter = itertools.count()


@pytest.mark.parametrize("variant", ["eager", "impl-cold", "impl-warm"])
def test_start(benchmark: Any, bench_options: harness.Options, tmp_path: Any, variant: str) -> None:
    """BE-1/BE-2: a fresh process per round; a warm round's cache folder is left by an untimed cold run."""
    samples: list[dict[str, Any]] = []

    def fresh(name: str) -> str:
        path = tmp_path / f"{name}-{next(_counter)}"
        path.mkdir()
        return str(path)

    def setup() -> tuple[tuple, dict[str, Any]]:
        cache = fresh("cache")
        if variant == "impl-warm":
            harness.run_worker(bench_options, "impl", cache_dir=cache, inductor_cache=fresh("inductor"))
        return (), {"cache_dir": cache, "inductor_cache": fresh("inductor")}

    def start(cache_dir: str, inductor_cache: str) -> None:
        samples.append(harness.run_worker(bench_options, harness.VARIANTS[variant], cache_dir=cache_dir,
                                          inductor_cache=inductor_cache, first_output_only=True))

    benchmark.group = f"start: {bench_options.impl} {bench_options.model} ({bench_options.compiler})"
    benchmark.pedantic(start, setup=setup, rounds=bench_options.rounds, iterations=1)
    summary = stats.summarize(samples)
    benchmark.extra_info.update({f"{k}_median": v["median"] for k, v in summary.items()})
    benchmark.extra_info["traced_runs"] = summary.get("traced_runs", {}).get("median")
    if variant == "impl-warm":
        assert not summary["traced_runs"]["median"], f"a warm start traced (CC-14): {samples[0].get('traced')}"
