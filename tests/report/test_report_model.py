"""What the night says (BE-4), as data: the saving, one regression per slowed figure, the tests that changed since
the previous night, two CANN versions side by side, and the machine-readable verdict (no pages drawn)."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.report import nightly_sample as sample
from torchair_conformance.report import changes as changes_mod
from torchair_conformance.report import history, matrix, model, outputs

NPU_8_1 = "torchair_npu · torch 2.6.0 · torch_npu 2.6.0.post2 · CANN 8.1.RC1 · Ascend910B2"
NPU_8_10 = "torchair_npu · torch 2.6.0 · torch_npu 2.6.0.post3 · CANN 8.10.RC1 · Ascend910B2"


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[history.Record], matrix.Matrix]:
    """The 60-night sample: CANN 8.10.RC1's warm load is 20 % slower than 8.1.RC1's."""
    root = sample.write(tmp_path_factory.mktemp("night"))
    return history.load(root / "history"), matrix.load(str(root / "conformance" / "*.json"))


def build(night: tuple, **kwargs) -> model.Report:
    records, results = night
    return model.build(records, results, history_files=[], **kwargs)


def test_one_slowdown_is_one_regression_with_its_checks_beneath(night: tuple) -> None:
    report = build(night)
    assert len(report.checks.fired) == 1, "warm load ÷ cold compile against CANN 8.1.RC1"
    (regression,) = report.regressions
    assert regression.label == "warm load ÷ cold compile" and regression.status == "regression"
    assert regression.series.latest.env["cann"] == "8.10.RC1"
    assert [(c.figure.key, c.kind) for c in regression.checks] == [("warm-load", "cann")]
    text = outputs.check_text(regression.primary)
    assert text.startswith("regression: vs CANN 8.1.RC1") and " → " in text and "limit +1" in text, text


def test_the_saving_is_cold_to_warm_with_last_nights_change(night: tuple) -> None:
    report = build(night)
    assert [s.series.latest.env.get("cann") for s in report.savings] == ["8.10.RC1", None], "stale series left out"
    saving = report.savings[0]
    assert saving.cold > 30 and saving.warm < 8 and saving.factor == pytest.approx(saving.cold / saving.warm)
    assert saving.previous is not None and saving.previous.date < saving.series.latest.date
    assert outputs.saving_text(saving).startswith(f"cold {saving.cold:.2f} s → warm {saving.warm:.2f} s: ×")
    assert "saved a start" in outputs.saving_text(saving)
    since = outputs.since_text(saving)
    assert since.startswith("since 2026-03-03: warm ") and " (" in since and "%" in since


@pytest.mark.parametrize("before, now, kind", [
    ("passed", "failed", "new failure"), (None, "error", "new failure"), ("xfailed", "xpassed", "new failure"),
    ("failed", "passed", "fixed"), ("error", "xfailed", "fixed"), ("failed", "skipped", "new skip"),
    ("passed", "skipped", "new skip"), ("skipped", "passed", "no longer skipped"), (None, "passed", "new test"),
    ("passed", None, "gone"), ("passed", "xfailed", "changed"), ("passed", "passed", None),
])
def test_a_tests_change_is_named(before: str | None, now: str | None, kind: str | None) -> None:
    assert changes_mod.classify(before, now) == kind


def test_changes_since_last_night_per_leg(night: tuple) -> None:
    records, results = night
    now = {c.label: changes_mod.outcomes(c) for c in results.columns}
    previous = {NPU_8_10: {**now[NPU_8_10], "torchair_conformance/test_warm_start.py::test_warm_untraced": "passed",
                           "torchair_conformance/test_config.py::test_equality_by_value": "skipped"},
                "torchair_npu · CANN 8.2.RC1 · Ascend910_9391": {"a": "passed"}}
    changes = build(night, previous=previous).changes
    assert changes.compared
    assert [(c.kind, c.test) for c in changes.tests] == [
        ("new failure", "torchair_conformance/test_warm_start.py::test_warm_untraced"),
        ("no longer skipped", "torchair_conformance/test_config.py::test_equality_by_value")]
    # the leg with results last night and none now, and the sample's legs without tonight's benchmarks
    assert changes.missing_legs == ["A2 · CANN 8.0.RC3 · torch-npu 2.6.0.post1 (torchair_npu)",
                                    "A2 · CANN 8.1.RC1 · torch-npu 2.6.0.post2 (torchair_npu)",
                                    "torchair_npu · CANN 8.2.RC1 · Ascend910_9391"]
    assert NPU_8_1 in changes.new_legs and NPU_8_10 not in changes.new_legs
    assert not build(night).changes.compared


def test_two_cann_versions_side_by_side(night: tuple) -> None:
    report = build(night, compare=("8.1.RC1", "8.10.RC1"))
    cmp = report.comparison
    ((title, a, b),) = cmp.runs
    assert "gpt-small" in title and a.env["cann"] == "8.1.RC1" and b.env["cann"] == "8.10.RC1"
    assert b.median("impl-warm", "compile_or_load_s") > 1.1 * a.median("impl-warm", "compile_or_load_s")
    assert cmp.paired == ["torchair_npu · Ascend910B2: CANN 8.1.RC1 → 8.10.RC1"]
    assert [(c.kind, c.before, c.now) for c in cmp.tests] == [("new failure", "passed", "error"),
                                                               ("new failure", "passed", "failed")]
    with pytest.raises(ValueError, match=r"'8\.2\.RC1'.*known: 8\.0\.RC3, 8\.1\.RC1, 8\.10\.RC1"):
        build(night, compare=("8.1.RC1", "8.2.RC1"))


def test_never_green_over_nothing_checked() -> None:
    report = model.build([], matrix.build([]), history_files=[])
    assert report.verdict.green and report.nothing_checked
    assert outputs.headline(report).startswith("nothing was checked")
    assert "0 results document(s) from tonight (0 tests)" in outputs.checked(report)
    assert "performance not checked" in outputs.checked(report)
    assert outputs.verdict_document(report)["nothing_checked"] is True


def test_verdict_json_junit_and_step_summary(night: tuple, tmp_path: Path) -> None:
    report = build(night)
    # the failing suite, the XPASS, and two legs of the sample that ran before but sent nothing fresh tonight
    assert outputs.headline(report) == "red: 4 problem(s), 1 figure(s) slower"
    assert sum(p.startswith("missing: ") for p in report.verdict.problems) == 2
    written = outputs.write(report, tmp_path)
    assert [p.name for p in written] == ["verdict.json", "verdict-junit.xml"]
    doc = json.loads((tmp_path / "verdict.json").read_text(encoding="utf-8"))
    assert doc["verdict"] == "red" and doc["format"] == outputs.FORMAT
    assert doc["checked"]["results"] == 4 and doc["checked"]["tests"] == 24
    assert len(doc["regressions"]) == 1 and len(doc["regressions"][0]["checks"]) == 1
    assert doc["performance"] == "checked" and "warm load ÷ cold compile" in doc["checked"]["figures"]
    assert doc["savings"][0]["cold_ttfo_s"] > doc["savings"][0]["warm_ttfo_s"]
    leg = next(leg for leg in doc["legs"] if leg["label"] == NPU_8_10)
    assert leg["tests"]["torchair_conformance/test_warm_start.py::test_warm_untraced"] == "failed"
    assert outputs.read_previous(tmp_path / "verdict.json")[NPU_8_10] == leg["tests"], "tomorrow's 'before'"
    root = ET.parse(tmp_path / "verdict-junit.xml").getroot()
    suites = {s.get("name"): s for s in root}
    assert suites[f"conformance: {NPU_8_10}"].get("failures") == "1"
    assert suites[f"conformance: {NPU_8_10}"].get("errors") == "1"
    assert suites["benchmark gate"].get("failures") == "1"
    assert suites["verdict"].find("testcase/failure") is not None
    summary_file = tmp_path / "summary.md"
    assert outputs.append_step_summary(report, {outputs.STEP_SUMMARY_VAR: str(summary_file)}) == str(summary_file)
    summary = summary_file.read_text(encoding="utf-8")
    assert summary.startswith("### Nightly: red") and "saved a start" in summary and "**Slower:**" in summary
    assert outputs.append_step_summary(report, {}) is None


def test_a_bad_previous_verdict_is_named(tmp_path: Path) -> None:
    assert outputs.read_previous(tmp_path / "none.json") is None
    bad = tmp_path / "verdict.json"
    bad.write_text('{"format": 1, "legs": "x"}', encoding="utf-8")
    with pytest.raises(outputs.PreviousError, match="verdict.json.*--previous"):
        outputs.read_previous(bad)
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(outputs.PreviousError, match="not a readable verdict.json"):
        outputs.read_previous(bad)
    bad.write_text('{"format": 2, "legs": []}', encoding="utf-8")
    with pytest.raises(outputs.PreviousError, match=r"verdict.json: a verdict.json of format 2; this reader knows "
                                                    r"format 1: pass --previous"):
        outputs.read_previous(bad)


def test_a_previous_verdict_from_before_the_rename_names_todays_tests(tmp_path: Path) -> None:
    """Last night's verdict.json, written when the suite was the package `conformance`, compares with tonight's
    results test by test (no spurious "changed since last night" on the night of the rename)."""
    old = tmp_path / "verdict.json"
    legs = [{"label": "ref", "tests": {"conformance/test_x.py::a": "passed"}}]
    old.write_text(json.dumps({"format": 1, "legs": legs}), encoding="utf-8")
    assert outputs.read_previous(old) == {"ref": {"torchair_conformance/test_x.py::a": "passed"}}


@pytest.mark.parametrize("name", ["hf:gpt2", "my_pkg.models:factory", "gpt-small", "a b/c\\d"])
def test_a_series_file_name_holds_no_character_a_checkout_refuses(name: str) -> None:
    """A chart's file name is the series' slug: a model named `hf:gpt2` or `package.module:factory` gives one with
    no `:` (Windows cannot check such a file out), no separator and no space; two models apart stay apart."""
    def series(model_name: str) -> model.Series:
        bench = {"model": model_name, "compiler": "inductor", "dynamic": True}
        run = model.Run("r1", "2026-11-30T00:00:00Z", None, {"impl": "torchair_ref"}, bench)
        return model.Series(("torchair_ref", model_name), [run])

    slug = series(name).slug
    assert slug.replace(".", "").replace("_", "").replace("-", "").isalnum(), slug
    assert slug != series(name + "x").slug
    if name == "gpt-small":
        assert slug.startswith("gpt-small-inductor-dyn-")  # a name of safe characters is kept as it was
