"""The conformance suite passes on the reference (``torchair_ref``) under three different hypothesis seeds, in the
default ``ci`` profile."""

from __future__ import annotations

import pytest

from tests.test_conformance_mutants import run_suite


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_suite_passes_on_the_reference(seed, tmp_path):
    code, document, output = run_suite("torchair_ref", "", tmp_path / "results.json", profile="ci",
                                       extra_args=[f"--hypothesis-seed={seed}"])
    failed = [(r["test"], r["message"]) for r in (document or {}).get("tests", []) if r["outcome"] in ("failed", "error")]
    assert code == pytest.ExitCode.OK and not failed, f"seed {seed}: exit {code}; failures {failed}\n{output}"
    assert len(document["tests"]) > 50, f"seed {seed}: only {len(document['tests'])} tests ran"
