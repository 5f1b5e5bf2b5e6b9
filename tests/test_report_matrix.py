"""The conformance matrix (clause x implementation/version) from the suite's JSON results."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.report import matrix

SAMPLES = Path(__file__).parent / "data" / "report_samples" / "conformance"


def test_statuses_by_precedence_and_clauses_in_spec_order() -> None:
    m = matrix.load(str(SAMPLES / "*.json"))
    ref, upstream = m.columns
    assert ref.startswith("torchair_ref 0.1.0 · torch 2.13.0+cpu") and "CANN 8.1.RC1" in upstream
    assert m.clauses == ["CC-8", "CC-9", "CC-10", "CC-13", "CC-14", "CF-2"]
    assert [m.status(c, ref) for c in m.clauses] == ["pass", "pass", "pass", "pass", "skip", "pass"]
    assert [m.status(c, upstream) for c in m.clauses] == ["pass", "pass", "xpass", "xfail", "fail", "xfail"]
    assert m.totals(upstream) == {"passed": 2, "xfailed": 2, "failed": 1, "xpassed": 1}


def test_no_results_is_an_empty_matrix(tmp_path: Path) -> None:
    assert matrix.load(str(tmp_path / "*.json")).clauses == []


def test_a_file_that_is_not_results_is_named(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text(json.dumps({"tests": [{"test": "x", "outcome": "maybe"}]}), encoding="utf-8")
    with pytest.raises(matrix.ResultsError, match=r"bad.json tests\[0\]: not a test record"):
        matrix.load(str(tmp_path / "*.json"))


def test_a_bare_list_is_not_the_suites_document(tmp_path: Path) -> None:
    (tmp_path / "list.json").write_text(json.dumps([]), encoding="utf-8")
    with pytest.raises(matrix.ResultsError, match="--conformance-json"):
        matrix.load(str(tmp_path / "*.json"))
