"""The conformance suite against upstream TorchAir's own Python on CPU (``--impl torchair_cpu``, IMPL-4): no failure.

Runs only on the torch that the torch-npu wheel needs (2.14.x, ``tox -e tests-torch2141``): there the suite
session starts in the background at the end of collection (``tests/suite/sessions.py``), beside the reference's
session under seed 2, while the warm-start tests run in the foreground. ``tox -e upstream`` runs the same suite
in the foreground and writes ``reports/conformance/torchair_cpu.json``. Known divergences are xfails with the
wheel's file:line (``torchair_conformance/known_divergences/torchair.txt``); the test prints the counts and every XPASS.
"""

from __future__ import annotations

import pytest
import torch

from tests.suite.sessions import SuiteRun

if not torch.__version__.startswith("2.14."):
    pytest.skip(f"upstream's Python runs on torch 2.14.x (the torch-npu 2.14.0 wheel's), not {torch.__version__}: "
                "tox -e tests-torch2141 runs it", allow_module_level=True)

UPSTREAM = SuiteRun("upstream-torchair-cpu", "torchair_cpu", profile="dev")


@pytest.mark.slow
@pytest.mark.suite_session(UPSTREAM)
def test_suite_has_no_failure_against_upstream_on_cpu(suite_session, request: pytest.FixtureRequest) -> None:
    """IMPL-4: every test that can run against upstream runs; each outcome is a pass, a skip naming what CPU lacks,
    or a known divergence (xfail, or an XPASS: fixed upstream, or draw-dependent)."""
    code, document, output = suite_session
    tests = (document or {}).get("tests", [])
    failed = [(r["test"], r["message"]) for r in tests if r["outcome"] in ("failed", "error")]
    assert code == pytest.ExitCode.OK and not failed, f"exit {code}; failures {failed}\n{output}"
    counts: dict[str, int] = {}
    for record in tests:
        counts[record["outcome"]] = counts.get(record["outcome"], 0) + 1
    xpassed = sorted(r["test"] for r in tests if r["outcome"] == "xpassed")
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line("")
        reporter.write_line("suite against upstream on CPU (dev profile): "
                            + ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items())))
        for test in xpassed:
            reporter.write_line(f"  XPASS {test}")
    assert counts.get("passed", 0) > 50, f"only {counts.get('passed', 0)} tests passed against upstream: {counts}"
