"""The real-model zoo's tests (`tox -e zoo`): skipped, with the reason and the install command, where the zoo's
packages (pyproject's `zoo` extra) are not installed. `TORCHAIR_ZOO_FAST=1` compiles with the reference's fast
graph compiler (`debug.run_eagerly`) instead of Inductor: the caching verdicts are the same, the runs shorter.
`TORCHAIR_ZOO_REPORT=FILE` appends each run's summary (`ZooRun.summary()`: cached, warm graphs, max error, times)
to FILE as one JSON line, for the tables of a report."""
from __future__ import annotations

import json
import os
from collections.abc import Callable

import pytest

from torchair_conformance.zoo import packages, run


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = packages.missing()
    if reason is None:
        return
    for item in items:
        if "tests/zoo/" in item.nodeid.replace(os.sep, "/"):
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def zoo_config() -> tuple:
    """The CompilerConfig assignments of every zoo run: Inductor (the true default), or the fast compiler."""
    return run.FAST if os.environ.get("TORCHAIR_ZOO_FAST") == "1" else ()


@pytest.fixture
def zoo_record() -> Callable[[run.ZooRun], None]:
    """Append a run's summary to `$TORCHAIR_ZOO_REPORT` (nothing when it is unset)."""
    path = os.environ.get("TORCHAIR_ZOO_REPORT")

    def record(result: run.ZooRun) -> None:
        if path:
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(result.summary()) + "\n")

    return record
