"""The zoo survey's own machinery on one small model: the guard walk reaches every leaf and the translator's
verdict on each, the export lowers every node to the end, and the page renders (the survey's numbers themselves
are in docs/zoo-survey.md)."""
from __future__ import annotations

import pytest

from tests.conftest import program_env
from tests.zoo import survey
from torchair_conformance import process
from torchair_conformance.zoo import run

pytestmark = [pytest.mark.slow]


def test_survey_of_one_model_lists_guards_and_every_missing_lowering() -> None:
    job = {"model": "resnet18", "pattern": "plain", "export": True, "export_dynamic": False}
    found = process.run("tests.zoo.survey_run", job, env=program_env(), timeout=run.TIMEOUT_S).result
    (method,) = found["methods"]
    assert method["method"] == "_run" and method["guards"] > 20, method
    assert sum(method["kinds"].values()) == method["guards"] and "TENSOR_MATCH" in method["kinds"], method
    assert sum(method["refusals"].values()) == len(method["refused_guards"]), method
    (export,) = found["export"]
    assert set(export["no_lowering"]) | set(export["lowering_refused"]) <= set(export["aten_ops"]), export
    if export["exported"]:
        assert not export["no_lowering"] and not export["lowering_refused"], export
    else:
        assert any(op in export["refusal"] for op in [*export["no_lowering"], *export["lowering_refused"]]), export
    page = survey.render([{"torch": found["torch"], "models": [{"model": "resnet18", "rows": [
        {**found, "cached": True, "not_cached": [], "cold_error": None, "versions": {"torch": found["torch"]}}]}]}])
    assert "| resnet18 | plain | yes |" in page and "### (c) `dynamo_export`" in page, page
