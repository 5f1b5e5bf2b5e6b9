"""The conformance suite passes on the reference (``torchair_ref``) under different hypothesis seeds.

``tox -e tests`` runs one seed (1) in the ``dev`` profile (every property, fewer examples each) to stay inside CI's
time budget, without the guard properties (``test_guards.py``, a cold and a warm process per example: half of the
session): ``tox -e tests-torch2141`` runs those against the reference on the second torch release
(`test_guard_properties_pass_on_the_reference`), where CI's other leg had a core to spare and the guard translator
meets the other torch's guards. ``TORCHAIR_SEEDS=2 tox -e tests-torch2141 -- tests/suite/test_conformance_reference.py``
runs the whole suite again under seed 2 there, and the main job (``tox -e conformance``) runs it all in the ``ci``
profile. ``TORCHAIR_SEEDS=1,2,3`` runs more seeds, and ``TORCHAIR_SEED_PROFILE=ci`` (or ``nightly``) a larger
profile.
"""

from __future__ import annotations

import os

import pytest

from tests.suite.sessions import ROOT, WITHOUT_ZOO, SuiteRun

PROFILE = os.environ.get("TORCHAIR_SEED_PROFILE", "dev")
SEEDS = [int(seed) for seed in os.environ.get("TORCHAIR_SEEDS", "1").split(",")]


GUARDS = ROOT / "torchair_conformance" / "test_guards.py"


def _run(seed: int) -> SuiteRun:
    return SuiteRun(f"reference-seed-{seed}", "torchair_ref", profile=PROFILE,
                    extra_args=(f"--hypothesis-seed={seed}", *WITHOUT_ZOO, f"--ignore={GUARDS}"))


GUARD_RUN = SuiteRun("reference-guards", "torchair_ref", profile=PROFILE, extra_args=("--hypothesis-seed=1",),
                     paths=(str(GUARDS),))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [pytest.param(seed, marks=pytest.mark.suite_session(_run(seed))) for seed in SEEDS])
def test_suite_passes_on_the_reference(seed, suite_session):
    """IMPL-1: the suite, but its guard properties (the test below), is green on the reference whatever the seed (run
    in the background from the end of collection, `tests/suite/sessions.py`)."""
    code, document, output = suite_session
    failed = [(r["test"], r["message"]) for r in (document or {}).get("tests", [])
              if r["outcome"] in ("failed", "error")]
    assert code == pytest.ExitCode.OK and not failed, (
        f"seed {seed} ({PROFILE}): exit {code}; failures {failed}\n{output}")
    assert len(document["tests"]) > 50, f"seed {seed}: only {len(document['tests'])} tests ran"


@pytest.mark.slow
@pytest.mark.suite_session(GUARD_RUN)
def test_guard_properties_pass_on_the_reference(suite_session):
    """IMPL-1, CC-21, CC-22: the guard properties are green on the reference (seed 1; tox -e tests-torch2141 runs
    this, tox -e tests deselects it)."""
    code, document, output = suite_session
    failed = [(r["test"], r["message"]) for r in (document or {}).get("tests", [])
              if r["outcome"] in ("failed", "error")]
    assert code == pytest.ExitCode.OK and not failed, f"guards ({PROFILE}): exit {code}; failures {failed}\n{output}"
    assert len(document["tests"]) > 20, f"only {len(document['tests'])} guard tests ran"
