"""The report shows every known divergence of a results document with the failure its entry expects and the
exception the run recorded (SPEC IMPL-5; torchair_conformance/report/divergences.py)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("jinja2", reason="the report's pages need jinja2 (the `report` extra)")
pytest.importorskip("matplotlib", reason="the report's charts need matplotlib (the `report` extra)")

from torchair_conformance.report import cli  # noqa: E402 - only once the report's extra is known to be there

SAMPLES = Path(__file__).parent / "data" / "report_samples"

ENTRY = {"clause": "CC-18", "expected": "NameError: name '\\w+' is not defined",
         "where": "inference/_cache_compiler.py:674", "reason": "globals of the caller's frame", "line": 12}
DOCUMENT = {
    "implementation": "torchair_cpu", "label": "upstream Python, graphs executed by the project's GE executor",
    "device": "cpu", "versions": {"torch": "2.14.0", "torch_npu": "2.14.0", "cann": None}, "exit_status": 0,
    "tests": [
        {"test": "torchair_conformance/test_inputs_outputs.py::test_globals", "outcome": "xfailed",
         "clauses": ["CC-18"], "exception": {"type": "AssertionError", "message": "warm run raised NameError: "
                                             "name 'OFFSET' is not defined"},
         "divergence": {**ENTRY, "evidence": "observed"}},
        {"test": "torchair_conformance/test_rng.py::test_rng[randn-reduce-overhead]", "outcome": "skipped",
         "clauses": ["CC-13"], "message": "needs reduce-overhead",
         "divergence": {**ENTRY, "clause": "CC-13", "expected": "Failed: DID NOT RAISE", "evidence": "code reading"}},
        {"test": "torchair_conformance/test_config.py::test_plain", "outcome": "passed", "clauses": ["CF-1"]},
    ],
}


def test_known_divergences_show_expected_and_recorded_exception_and_evidence(tmp_path: Path) -> None:
    conformance = tmp_path / "conformance"
    shutil.copytree(SAMPLES / "conformance", conformance)
    (conformance / "3-torchair_cpu.json").write_text(json.dumps(DOCUMENT))
    out = tmp_path / "out"
    cli.main(["--history", str(SAMPLES / "history"), "--conformance", str(conformance / "*.json"), "--out", str(out)])
    readme = (out / "README.md").read_text(encoding="utf-8")
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "### Known divergences: torchair_cpu" in readme, readme[-3000:]
    row = next(line for line in readme.splitlines() if "test_inputs_outputs.py::test_globals" in line)
    assert "xfailed (failed as listed)" in row and "| observed |" in row, row
    assert r"NameError: name '\w+' is not defined" in row and "inference/_cache_compiler.py:674" in row, row
    assert "AssertionError: warm run raised NameError: name 'OFFSET' is not defined" in row, row
    reading = next(line for line in readme.splitlines() if "randn-reduce-overhead" in line)
    assert "| code reading |" in reading and "skipped (not run here)" in reading and "Failed: DID NOT RAISE" in reading
    assert "test_plain" not in readme.split("### Known divergences")[1]
    assert "<h3>Known divergences: torchair_cpu" in page and "name &#39;OFFSET&#39; is not defined" in page
