"""The conformance suite passes on the reference (``torchair_ref``) under different hypothesis seeds.

``tox -e tests`` runs one seed (1) in the ``dev`` profile (every property, fewer examples each) to stay inside CI's
time budget; ``tox -e tests-torch2141`` runs the whole suite again under seed 2 on the second torch release, and the
main job (``tox -e conformance``) runs the ``ci`` profile. ``TORCHAIR_SEEDS=1,2,3`` runs more seeds, and
``TORCHAIR_SEED_PROFILE=ci`` (or ``nightly``) a larger profile.
"""

from __future__ import annotations

import os

import pytest

from tests.test_conformance_mutants import run_suite

PROFILE = os.environ.get("TORCHAIR_SEED_PROFILE", "dev")
SEEDS = [int(seed) for seed in os.environ.get("TORCHAIR_SEEDS", "1").split(",")]


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_suite_passes_on_the_reference(seed, tmp_path):
    """IMPL-1: the whole suite is green on the reference whatever the seed."""
    code, document, output = run_suite("torchair_ref", tmp_path / "results.json", profile=PROFILE,
                                       extra_args=[f"--hypothesis-seed={seed}"])
    failed = [(r["test"], r["message"]) for r in (document or {}).get("tests", []) if r["outcome"] in ("failed", "error")]
    assert code == pytest.ExitCode.OK and not failed, f"seed {seed} ({PROFILE}): exit {code}; failures {failed}\n{output}"
    assert len(document["tests"]) > 50, f"seed {seed}: only {len(document['tests'])} tests ran"
