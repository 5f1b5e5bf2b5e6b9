"""The suite's results document: one typed, versioned record written and read by
`torchair_conformance.report.results`."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchair_conformance.report import matrix, results

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = sorted((ROOT / "reports" / "conformance").glob("*.json")) + sorted(
    (Path(__file__).parent / "data" / "report_samples" / "conformance").glob("*.json"))


def _document() -> results.Document:
    return results.Document(
        implementation="torchair_ref", label="", device="cpu", versions={"torchair_ref": "0.1.0", "torch": "2.13"},
        capabilities=["aot"], profile="dev", started=1.0, finished=2.0, exit_status=1,
        tests=[results.TestRecord("torchair_conformance/test_x.py::a", "failed", ["CC-1"], phase="call",
                                  message="boom"),
               results.TestRecord("torchair_conformance/test_x.py::b", "xpassed", ["CC-2"], fixed_upstream=False)])


def test_a_written_document_reads_back_the_same(tmp_path: Path) -> None:
    path = results.write(str(tmp_path / "out.json"), _document())
    assert json.loads(path.read_text(encoding="utf-8"))["format"] == results.FORMAT
    assert results.read(path) == _document()


def test_a_folder_gets_one_file_per_implementation_and_environment(tmp_path: Path) -> None:
    path = results.write(str(tmp_path) + "/", _document())
    assert path == tmp_path / "torchair_ref-cpu.json"


def test_an_unknown_format_is_refused_naming_the_file_the_format_and_the_fix(tmp_path: Path) -> None:
    data = json.loads(_document().to_json())
    data["format"] = 2
    (tmp_path / "new.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(results.ResultsError, match=r"new\.json: a results document of format 2; this reader knows "
                                                   r"format 1: write it again with this checkout"):
        results.read(tmp_path / "new.json")


def test_a_document_without_a_format_is_format_1(tmp_path: Path) -> None:
    data = json.loads(_document().to_json())
    del data["format"]
    (tmp_path / "old.json").write_text(json.dumps(data), encoding="utf-8")
    assert results.read(tmp_path / "old.json") == _document()


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.name)
def test_every_committed_document_still_reads(path: Path) -> None:
    document = results.read(path)
    assert document.tests and all(t.outcome and t.test for t in document.tests)
    assert matrix.build([(str(path), document)]).columns[0].implementation == document.implementation


def test_committed_documents_are_found() -> None:
    """The documents the test above reads exist (a moved folder must not turn it into a test of nothing)."""
    assert len(COMMITTED) >= 4, COMMITTED


def test_names_from_before_the_rename_read_as_todays(tmp_path: Path) -> None:
    """A document written when the suite was the package `conformance` names its tests as today's suite does, so
    the matrix and "changed since last night" compare the same tests across the rename."""
    data = {"implementation": "torchair_ref", "tests": [{"test": "conformance/test_x.py::a", "outcome": "passed"}]}
    (tmp_path / "old.json").write_text(json.dumps(data), encoding="utf-8")
    (record,) = results.read(tmp_path / "old.json").tests
    assert record.test == "torchair_conformance/test_x.py::a", record
    assert results.test_id("torchair_conformance/test_x.py::a") == "torchair_conformance/test_x.py::a"
