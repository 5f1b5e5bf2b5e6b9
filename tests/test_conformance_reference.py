"""The conformance suite passes on the reference (``torchair_ref``) under three different hypothesis seeds.

CI runs the three seeds in the ``dev`` profile (every property, fewer examples each) to stay inside its time budget;
the main job (``tox -e conformance``) runs the ``ci`` profile. ``TORCHAIR_SEED_PROFILE=ci`` (or ``nightly``) runs
this test with a larger profile.
"""

from __future__ import annotations

import os

import pytest

from tests.test_conformance_mutants import run_suite

PROFILE = os.environ.get("TORCHAIR_SEED_PROFILE", "dev")


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_suite_passes_on_the_reference(seed, tmp_path):
    """IMPL-1: the whole suite is green on the reference whatever the seed."""
    code, document, output = run_suite("torchair_ref", "", tmp_path / "results.json", profile=PROFILE,
                                       extra_args=[f"--hypothesis-seed={seed}"])
    failed = [(r["test"], r["message"]) for r in (document or {}).get("tests", []) if r["outcome"] in ("failed", "error")]
    assert code == pytest.ExitCode.OK and not failed, f"seed {seed} ({PROFILE}): exit {code}; failures {failed}\n{output}"
    assert len(document["tests"]) > 50, f"seed {seed}: only {len(document['tests'])} tests ran"
