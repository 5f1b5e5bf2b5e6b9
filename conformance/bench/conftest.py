"""pytest-benchmark integration (`tox -e bench`): machine info and the options of `bench_*.py`.

Run: `python -m pytest conformance/bench/bench_startup.py conformance/bench/bench_overhead.py
--benchmark-json=reports/benchmarks.json` (files named `bench_*.py` are not collected by a plain `pytest conformance`).
The implementation comes from the suite's `--impl` where that option exists, else `$TORCHAIR_CONFORMANCE_IMPL`, else
`torchair_ref`; `$TORCHAIR_BENCH_MODEL` (default tiny), `$TORCHAIR_BENCH_ROUNDS` (default 5) and
`$TORCHAIR_BENCH_RUN_EAGERLY=1` (the implementation's eager graph compiler) choose what the benchmarks run.
"""
from __future__ import annotations

import os
from typing import Any

import pytest

from conformance.bench import cli, harness


def implementation_name(config: pytest.Config) -> str:
    """IMPL-1: `--impl` (when the suite's conftest declares it), else the environment variable, else the default."""
    try:
        option = config.getoption("--impl")
    except ValueError:
        option = None
    return option or os.environ.get(cli.ENV_VAR) or cli.DEFAULT_IMPL


def options_from(config: pytest.Config) -> harness.Options:
    return harness.Options(
        impl=implementation_name(config),
        model=os.environ.get("TORCHAIR_BENCH_MODEL", "tiny"),
        rounds=int(os.environ.get("TORCHAIR_BENCH_ROUNDS", "5")),
        run_eagerly=os.environ.get("TORCHAIR_BENCH_RUN_EAGERLY", "") not in ("", "0"),
        baselines=("eager",),
    )


@pytest.fixture(scope="session")
def bench_options(pytestconfig: pytest.Config) -> harness.Options:
    return options_from(pytestconfig)


def pytest_benchmark_update_machine_info(config: pytest.Config, machine_info: dict[str, Any]) -> None:
    """BE-3: the implementation, torch, torch_npu, CANN version, SoC and device beside pytest-benchmark's own."""
    from conformance.bench import environment, worker

    opts = options_from(config)
    impl = worker.import_impl(opts.impl)
    machine_info["torchair"] = environment.collect(opts.impl, impl, opts.device)
    machine_info["torchair"]["commit"] = environment.project_commit()
