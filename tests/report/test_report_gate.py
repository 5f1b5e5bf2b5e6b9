"""The gate (BE-4): CANN over CANN and against earlier nights, on in-run ratios against their own noise; what it leaves
out."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tests.report import nightly_sample as sample
from torchair_conformance.report import gate, history, model


def evaluate(tmp_path: Path, *, plant: bool, extra: list[history.Record] = (), accepted: str = "") -> gate.GateResult:
    sample.write(tmp_path, plant=plant)
    if extra:
        history.append(tmp_path / "history", extra)
    entries = []
    if accepted:
        (tmp_path / "accepted.json").write_text(accepted, encoding="utf-8")
        entries = gate.load_accepted(str(tmp_path / "accepted.json"))
    series = model.group(history.load(tmp_path / "history"))
    return gate.evaluate({s.key: [r.view() for r in s.runs] for s in series}, accepted=entries)


def fired(verdict: gate.GateResult) -> list[tuple[str, str, str]]:
    return [(c.kind, c.figure.key, c.run.env["cann"]) for c in verdict.fired]


def test_a_cann_over_cann_slowdown_in_the_third_version_fires(tmp_path: Path) -> None:
    verdict = evaluate(tmp_path, plant=True)
    assert ("cann", "warm-load", "8.10.RC1") in fired(verdict)
    (check,) = [c for c in verdict.fired if c.figure.key == "warm-load"]
    assert check.baseline_label.startswith("CANN 8.1.RC1")  # 8.10 follows 8.1 by version, not 8.0 or a string
    assert check.factor > 1 + check.limit and check.status == "regression" and check.nights >= gate.MIN_HISTORY
    assert all(kind == "cann" for kind, _, _ in fired(verdict)), "within 8.10 nothing changed"


def test_no_slowdown_no_fire(tmp_path: Path) -> None:
    verdict = evaluate(tmp_path, plant=False)
    assert fired(verdict) == []
    assert {c.kind for c in verdict.checks} == {"window", "cann"}


def test_a_busy_host_run_is_shown_not_gated(tmp_path: Path) -> None:
    # One round is judged (the noise comes from the series' nights, not from the run's rounds); a busy host is not.
    slow = sample.night_records(61, "8.10.RC1", "2.6.0.post3", rng=random.Random(1), rounds=1, busy=3.0,
                                load_1min=6.7)
    for record in slow:
        record.load_avg["cpus"] = 2
    verdict = evaluate(tmp_path, plant=False, extra=slow)
    assert fired(verdict) == []
    latest = [c for c in verdict.checks if c.run.run_id.endswith("-61-8.10.RC1")]
    assert latest and all(c.status == "not gated" and c.reason.startswith("busy host: 1-minute load 6.7")
                          for c in latest)
    assert all(c.factor < 1.3 for c in latest), "3x slower in seconds, but a busy host slows both sides of a ratio"
    assert gate.busy(model.Run("r", "2026-03-05T02:00:00Z", None, {}, {}).view()) is None
    assert "busy host: 1-minute load 6.7 on 2 CPUs" in gate.busy(
        gate.RunView("r", "d", None, {}, {"rounds": 5}, {}, {"start": [6.7], "end": [1.0], "cpus": 2}))


def test_a_stale_series_is_not_gated(tmp_path: Path) -> None:
    # The last night of CANN 8.0 (night 20) is twice as slow, but 8.0 was not run in the latest night.
    rng = random.Random(2)
    late = sample.night_records(20, "8.0.RC3", "2.6.0.post1", rng=rng, slower_load=2.0, hour=3)
    verdict = evaluate(tmp_path, plant=False, extra=late)
    assert fired(verdict) == []
    stale = [c for c in verdict.checks if c.run.env["cann"] == "8.0.RC3" and c.status == "not gated"]
    assert stale and all(c.reason.startswith("stale series: last run 2026-01-20") for c in stale)


def test_an_accepted_change_is_shown_not_gated(tmp_path: Path) -> None:
    accepted = json.dumps({"accepted": [{"figure": "*", "match": {"cann": "8.10.RC1", "soc": "Ascend910B2"},
                                         "reason": "GE's new memory planner", "reviewed": "PR #42"}]})
    verdict = evaluate(tmp_path, plant=True, accepted=accepted)
    assert fired(verdict) == []
    assert any(c.status == "accepted" and "PR #42" in c.reason for c in verdict.checks)


def test_a_bad_accepted_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "accepted.json"
    path.write_text(json.dumps({"accepted": [{"figure": "warm-load", "match": {}}]}), encoding="utf-8")
    with pytest.raises(gate.AcceptedError, match=r"accepted\[0\]: needs 'figure'"):
        gate.load_accepted(str(path))
    assert gate.load_accepted(str(tmp_path / "absent.json")) == []


def test_torch_versions_sort_by_packaging_version() -> None:
    assert sorted(["2.6.0.post10", "2.6.0.post2", "2.10.0", "weird"], key=gate.version_key) == [
        "2.6.0.post2", "2.6.0.post10", "2.10.0", "weird"]


def test_the_previous_cann_of_a_pre_release_build_is_the_release_before_it() -> None:
    def run(cann: str) -> gate.RunView:
        return gate.RunView(cann, "2026-03-01T02:00:00Z", None, {"cann": cann}, {"rounds": 5}, {})

    group = {gate.comparison_group({"cann": "x"}, {}): {v: [run(v)] for v in (
        "8.0.RC3", "8.0.0", "8.1.RC1", "8.1.RC1.alpha001", "8.1.RC1.B010")}}
    assert gate.previous_cann_runs(run("8.1.RC1.alpha002"), group)[0].run_id == "8.1.RC1.alpha001"
    assert gate.previous_cann_runs(run("8.1.RC1.alpha001"), group)[0].run_id == "8.0.0"
    assert gate.previous_cann_runs(run("8.1.RC1"), group)[0].run_id == "8.1.RC1.B010"
    assert gate.previous_cann_runs(run("8.0.RC3"), group) == []


def test_only_the_implementations_figures_are_gated() -> None:
    assert {f.variant for f in gate.FIGURES} == {"impl-warm", "impl-cold"}
    assert all(f.den_variant in ("eager", "impl-cold") for f in gate.FIGURES), "each normalised within the run"
    ratio = next(f for f in gate.FIGURES if f.key == "warm-ttfo")
    assert ratio.value({"impl-warm": [{"ttfo_s": 2.0}, {"ttfo_s": 3.0}],
                        "eager": [{"ttfo_s": 1.0}, {"ttfo_s": 2.0}]}) == 1.75, "the median of the per-round ratios"


def test_results_older_than_their_environments_benchmarks_are_stale(tmp_path: Path) -> None:
    from torchair_conformance.report import matrix, verdict

    root = sample.write(tmp_path, plant=False)
    # The night after: CANN 8.10 benchmarked again, but its suite wrote nothing (say `import torchair` failed).
    history.append(root / "history", sample.night_records(61, "8.10.RC1", "2.6.0.post3", rng=random.Random(3)))
    series = model.group(history.load(root / "history"))
    checks = gate.evaluate({s.key: [r.view() for r in s.runs] for s in series})
    results = matrix.load(str(root / "conformance" / "*.json"))
    night = verdict.judge(results, checks, [r.view() for s in series for r in s.runs],
                          verdict.Night(required=("torchair_npu", "torchair_gone")))
    assert list(night.stale) == [c.label for c in results.columns if c.versions.get("cann") == "8.10.RC1"]
    # red once, as the leg whose results did not come tonight (its old results are absent, not counted)
    assert any(p.startswith("missing: A2 · CANN 8.10.RC1 · torch-npu 2.6.0.post3 (torchair_npu): no results since")
               for p in night.problems)
    assert not any("stale" in p and "8.1.RC1 " in p for p in night.problems), "8.1 was not run that night"
    assert ("conformance torchair_gone: results missing: none from tonight (since 2026-03-04T02:00:00Z); no results "
            "document for it") in night.problems


def test_the_published_accepted_changes_file_is_valid() -> None:
    path = Path(__file__).resolve().parents[2] / "reports" / "accepted-changes.json"
    assert isinstance(gate.load_accepted(str(path)), list)
