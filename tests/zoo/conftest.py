"""The real-model zoo's tests (`tox -e zoo`): skipped, with the reason and the install command, where the zoo's
packages (pyproject's `zoo` extra) are not installed. `TORCHAIR_ZOO_FAST=1` compiles with the reference's fast
graph compiler (`debug.run_eagerly`) instead of Inductor: the caching verdicts are the same, the runs shorter."""
from __future__ import annotations

import os

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
