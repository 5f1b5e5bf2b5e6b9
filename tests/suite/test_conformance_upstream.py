"""The conformance suite against upstream TorchAir's own Python on CPU (``--impl torchair_cpu``, IMPL-4): no failure.

Runs only on the torch that the torch-npu wheel needs (2.14.x, ``tox -e tests-torch2141``): there the suite runs as
two sessions, the guard properties (``test_guards.py``) and the rest, started in the background at the end of
collection (``tests/suite/sessions.py``) while the warm-start tests and the zoo's slice run in the foreground. CI
(``-m "not nightly"``) runs the rest only: upstream checks no guard, so 28 of the 31 guard properties are known
divergences that cost 16 minutes of a core (each a cold and a warm process, run twice: found, then replayed), the
largest part of CI's longest leg; ``tox -e upstream`` (CPU), the nightly (real TorchAir on NPU) and
``tox -e tests-torch2141 -- -m "not nightly or suite_session"`` run them.
``tox -e upstream`` runs the whole suite in one session in the foreground and writes
``reports/conformance/torchair_cpu.json``. Known divergences are xfails with the wheel's file:line and the failure
each expects (``torchair_conformance/known_divergences/torchair.txt``, IMPL-5); the test prints the counts, every
XPASS and every xfail's recorded exception.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from ge_executor import supported_op_types
from tests.ge_executor.emitted import graph_op_types
from tests.suite.sessions import GE_GRAPHS, WITHOUT_ZOO, SuiteRun

if not torch.__version__.startswith("2.14."):
    pytest.skip(f"upstream's Python runs on torch 2.14.x (the torch-npu 2.14.0 wheel's), not {torch.__version__}: "
                "tox -e tests-torch2141 runs it", allow_module_level=True)

SUITE = Path(__file__).resolve().parents[2] / "torchair_conformance"
GUARDS = SUITE / "test_guards.py"
#: the two halves of the suite against upstream: (session, the least number of tests it must pass, the least number
#: of GE graphs upstream must build in it)
PARTS = {
    "guards": (SuiteRun("upstream-torchair-cpu-guards", "torchair_cpu", profile="dev", extra_args=(
        *WITHOUT_ZOO, *(f"--ignore={path}" for path in sorted(SUITE.glob("test_*.py")) if path != GUARDS))), 2, 5),
    "rest": (SuiteRun("upstream-torchair-cpu-rest", "torchair_cpu", profile="dev",
                      extra_args=(*WITHOUT_ZOO, f"--ignore={GUARDS}")), 50, 20),
}
#: the guard properties against upstream are kept out of CI (see above)
NIGHTLY_PARTS = frozenset({"guards"})
PART_PARAMS = [pytest.param(name, marks=[pytest.mark.suite_session(run)]
                            + ([pytest.mark.nightly] if name in NIGHTLY_PARTS else []))
               for name, (run, *_) in PARTS.items()]


@pytest.mark.slow
@pytest.mark.parametrize("part", PART_PARAMS)
def test_suite_has_no_failure_against_upstream_on_cpu(part: str, suite_session,
                                                      request: pytest.FixtureRequest) -> None:
    """IMPL-4: every test that can run against upstream runs; each outcome is a pass, a skip naming what CPU lacks,
    or a known divergence (xfail: failed as its entry says, IMPL-5; or an XPASS: fixed upstream, or draw-dependent)."""
    code, document, output = suite_session
    tests = (document or {}).get("tests", [])
    failed = [(r["test"], r["message"]) for r in tests if r["outcome"] in ("failed", "error")]
    assert code == pytest.ExitCode.OK and not failed, f"exit {code}; failures {failed}\n{output}"
    counts: dict[str, int] = {}
    for record in tests:
        counts[record["outcome"]] = counts.get(record["outcome"], 0) + 1
    xpassed = sorted(r["test"] for r in tests if r["outcome"] == "xpassed")
    # IMPL-5: an xfail is a listed test that failed as its entry says; the document records what it raised
    xfailed = [r for r in tests if r["outcome"] == "xfailed"]
    bare = [r["test"] for r in xfailed if not (r.get("exception") and r.get("divergence"))]
    assert not bare, f"IMPL-5: xfails without their recorded exception or entry: {bare}"
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line("")
        reporter.write_line(f"suite against upstream on CPU (dev profile, {part}): "
                            + ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items())))
        for test in xpassed:
            reporter.write_line(f"  XPASS {test}")
        for record in xfailed:
            reporter.write_line(f"  XFAIL {record['test']}: {record['exception']['type']}")
    least = PARTS[part][1]  # the guard properties mostly xfail: upstream checks no guard (known divergences)
    assert counts.get("passed", 0) >= least, f"only {counts.get('passed', 0)} tests passed against upstream: {counts}"


def zoo_graph_folders() -> list[Path]:
    """Folders of GE graphs that upstream emitted for the real-model zoo (transformers/timm models compiled by
    upstream on CPU with ``$TORCHAIR_CPU_GE_GRAPHS`` set): the zoo adds its folders here, so that every op type
    upstream emits for a zoo model needs a kernel too. None yet."""
    return []


@pytest.mark.slow
@pytest.mark.parametrize("part", PART_PARAMS)
def test_every_op_type_upstream_emits_for_the_suite_has_a_kernel(part: str, suite_session_folder: Path) -> None:
    """EX-11, IMPL-4: the op types of every GE graph upstream's converters built in the suite's run (known
    divergences included: an xfail would hide a missing kernel) and for the real-model zoo have a CPU kernel, so no
    verdict about upstream rests on "needs CANN/GE: no CPU kernel"."""
    folders = [suite_session_folder / GE_GRAPHS, *zoo_graph_folders()]
    emitted = graph_op_types(folders)
    graphs = {name for names in emitted.values() for name in names}
    least = PARTS[part][2]
    assert len(graphs) >= least, f"only {len(graphs)} GE graphs in {folders}: did the session run against upstream?"
    missing = {op_type: len(names) for op_type, names in emitted.items() if op_type not in supported_op_types()}
    assert not missing, (f"op types upstream emits without a CPU kernel (op type: graphs holding it, of "
                         f"{len(graphs)}): {missing}; add each to its family in impl/ge_executor/kernels/")
