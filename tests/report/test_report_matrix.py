"""The conformance matrix (clause x implementation/version) from the suite's JSON results."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchair_conformance.report import matrix, results

SAMPLES = Path(__file__).parent / "data" / "report_samples" / "conformance"


def test_statuses_by_precedence_and_clauses_in_spec_order() -> None:
    m = matrix.load(str(SAMPLES / "*.json"))
    ref, upstream = (c.label for c in m.columns)
    assert ref.startswith("torchair_ref 0.1.0 · torch 2.13.0+cpu") and "CANN 8.1.RC1" in upstream
    assert m.clauses == ["CC-8", "CC-9", "CC-10", "CC-13", "CC-14", "CF-2"]
    assert [m.status(c, ref) for c in m.clauses] == ["pass", "pass", "pass", "pass", "skip", "pass"]
    assert [m.status(c, upstream) for c in m.clauses] == ["pass", "pass", "xpass", "xfail", "fail", "xfail"]


def test_totals_count_tests_not_clause_test_pairs() -> None:
    m = matrix.load(str(SAMPLES / "*.json"))
    upstream = m.columns[1]
    # test_path_formula names CC-8 and CC-9: one test, counted once
    assert m.totals(upstream.label) == {"passed": 1, "xfailed": 2, "failed": 1, "xpassed": 1}
    assert m.cell_counts("CC-8", upstream.label) == {"passed": 1}


def _document(tmp_path: Path, name: str, outcomes: dict[str, str], **extra: object) -> None:
    tests = [{"test": f"torchair_conformance/test_x.py::{t}", "clauses": ["CC-1"], "outcome": o, "message": f"why {t}"}
             for t, o in outcomes.items()]
    data = {"implementation": "torchair_npu", "device": "npu", "versions": {"cann": name}, "tests": tests, **extra}
    (tmp_path / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")


def test_every_outcome_is_kept_error_and_unknown_included(tmp_path: Path) -> None:
    _document(tmp_path, "8.1", {"a": "passed", "b": "error", "c": "rerun"})
    m = matrix.load(str(tmp_path / "*.json"))
    (column,) = m.columns
    assert column.counts == {"passed": 1, "error": 1, "rerun": 1}
    assert m.status("CC-1", column.label) == "fail"
    assert [t.test.rsplit("::")[-1] for t in column.bad] == ["b"]
    assert sorted(column.counts, key=matrix.outcome_order) == ["passed", "error", "rerun"]


def test_one_column_per_environment_and_file_names_per_environment(tmp_path: Path) -> None:
    _document(tmp_path, "8.1", {"a": "passed"})
    _document(tmp_path, "8.10", {"a": "failed"})
    m = matrix.load(str(tmp_path / "*.json"))
    assert [c.label for c in m.columns] == ["torchair_npu · CANN 8.1", "torchair_npu · CANN 8.10"]
    name = results.results_file_name("torchair_npu", "npu", {"cann": "8.1.RC1", "soc": "Ascend 910B/2"}, {})
    assert name == "torchair_npu-npu-cann-8.1.RC1-soc-Ascend_910B_2.json"
    assert name != results.results_file_name("torchair_npu", "npu", {"cann": "8.2.RC1", "soc": "Ascend 910B/2"}, {})


def test_results_file_name_falls_back_to_the_pipeline_soc_and_the_toolkits_cann(tmp_path: Path) -> None:
    (tmp_path / "x86_64-linux").mkdir()
    (tmp_path / "x86_64-linux" / "ascend_toolkit_install.info").write_text("version=8.2.RC1\n", encoding="utf-8")
    (tmp_path / "ascend_toolkit_install.info").write_text("version=8.2.RC1\n", encoding="utf-8")
    environ = {"TORCHAIR_SOC": "A3", "ASCEND_HOME_PATH": str(tmp_path)}
    assert results.results_file_name("torchair_npu", "npu", {}, environ) == "torchair_npu-npu-cann-8.2.RC1-soc-A3.json"
    assert results.results_file_name("torchair_ref", "cpu", {}, {}) == "torchair_ref-cpu.json"


def test_no_results_is_an_empty_matrix(tmp_path: Path) -> None:
    assert matrix.load(str(tmp_path / "*.json")).clauses == []


def test_a_record_without_an_outcome_is_named(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text(json.dumps({"tests": [{"test": "x"}]}), encoding="utf-8")
    with pytest.raises(results.ResultsError, match=r"bad.json tests\[0\]: not a test record"):
        matrix.load(str(tmp_path / "*.json"))


def test_a_bare_list_is_not_the_suites_document(tmp_path: Path) -> None:
    (tmp_path / "list.json").write_text(json.dumps([]), encoding="utf-8")
    with pytest.raises(results.ResultsError, match="--conformance-json"):
        matrix.load(str(tmp_path / "*.json"))


def test_a_draw_dependent_pass_is_not_reported_as_fixed_upstream(tmp_path: Path) -> None:
    tests = [{"test": "torchair_conformance/test_x.py::fixed", "clauses": ["EX-6"], "outcome": "xpassed",
              "fixed_upstream": True},
             {"test": "torchair_conformance/test_x.py::draw", "clauses": ["EX-7"], "outcome": "xpassed",
              "fixed_upstream": False}]
    data = {"implementation": "torchair_cpu", "device": "cpu", "versions": {}, "tests": tests}
    (tmp_path / "cpu.json").write_text(json.dumps(data), encoding="utf-8")
    m = matrix.load(str(tmp_path / "*.json"))
    column = m.columns[0]
    assert [t.test for t in column.bad] == ["torchair_conformance/test_x.py::fixed"]
    assert m.status("EX-6", column.label) == "xpass" and m.status("EX-7", column.label) == "xfail"
    assert column.counts == {"xpassed": 1, "xpassed_draw": 1}
