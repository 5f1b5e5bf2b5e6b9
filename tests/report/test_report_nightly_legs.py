"""The night's legs (SPEC BE-4, issue 21): a leg that did not run tonight, an empty results pattern and a failed leg
make the night red; staleness and `--require-results` look at tonight's results of the same environment."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

pytest.importorskip("matplotlib", reason="the report's charts need matplotlib (the `report` extra)")

from tests.report import nightly_sample as sample  # noqa: E402
from torchair_conformance.report import cli, history  # noqa: E402 - only once the report's extra is known to be there

#: night 60 of the sample is 2026-03-04 (02:00 UTC); night 56, four days before
TONIGHT, FOUR_DAYS_AGO = 60, 56
A3 = "Ascend910_9391"


def results(folder: Path, cann: str, soc: str, night: int, outcome: str = "passed") -> None:
    """A results document of upstream on the NPU, finished half an hour before night `night`'s benchmarks."""
    folder.mkdir(parents=True, exist_ok=True)
    finished = 1772587800.0 - (TONIGHT - night) * 86400
    doc = {"implementation": "torchair_npu", "device": "npu", "finished": finished, "exit_status": 0,
           "versions": {"torch": "2.6.0", "torch_npu": "2.6.0.post2", "cann": cann, "soc": soc},
           "tests": [{"test": "torchair_conformance/test_paths.py::test_path_formula", "clauses": ["CC-8"],
                      "outcome": outcome}]}
    (folder / f"torchair_npu-npu-cann-{cann}-soc-{soc}.json").write_text(json.dumps(doc), encoding="utf-8")


def bench(root: Path, nights: range, cann: str, soc: str = "Ascend910B2") -> None:
    rng = random.Random(7)
    for night in nights:
        records = sample.night_records(night, cann, "2.6.0.post2", rng=rng)
        for record in records:
            record.env = {**record.env, "soc": soc}
        history.append(root / "history", records)


def report(root: Path, capsys: pytest.CaptureFixture, *extra: str) -> tuple[int, str]:
    status = cli.main(["--gate", "--history", str(root / "history"), "--conformance",
                       str(root / "conformance" / "*.json"), "--out", str(root / "out"),
                       "--accepted", str(root / "absent.json"), *extra])
    captured = capsys.readouterr()
    return status, captured.out + captured.err


def test_a_leg_that_last_ran_four_days_ago_makes_the_night_red(tmp_path: Path, capsys) -> None:
    # CANN 8.1.RC1 ran every night up to last night; CANN 8.2.RC1 (same SoC) last ran four days ago: its install
    # has failed since, leaving its old results and old benchmarks behind.
    bench(tmp_path, range(50, TONIGHT + 1), "8.1.RC1")
    bench(tmp_path, range(50, FOUR_DAYS_AGO + 1), "8.2.RC1")
    results(tmp_path / "conformance", "8.1.RC1", "Ascend910B2", TONIGHT)
    results(tmp_path / "conformance", "8.2.RC1", "Ascend910B2", FOUR_DAYS_AGO)
    status, out = report(tmp_path, capsys, "--require-results", "torchair_npu")
    assert status == 1, out
    assert "verdict: red" in out
    assert "missing: A2 · CANN 8.2.RC1 · torch-npu 2.6.0.post2 (torchair_npu): no results and no benchmarks" in out
    assert "last ran 2026-02-28T02:00:00Z" in out
    assert "8.1.RC1 · torch-npu 2.6.0.post2 (torchair_npu): no" not in out, "8.1 ran tonight"


def test_a_retired_leg_is_no_longer_expected(tmp_path: Path, capsys) -> None:
    bench(tmp_path, range(55, TONIGHT + 1), "8.1.RC1")
    bench(tmp_path, range(55, FOUR_DAYS_AGO + 1), "8.2.RC1")
    results(tmp_path / "conformance", "8.1.RC1", "Ascend910B2", TONIGHT)
    retired = tmp_path / "retired.json"
    retired.write_text(json.dumps({"retired": [{"match": {"cann": "8.2.rc1"}, "reason": "8.2.RC1 withdrawn",
                                                "reviewed": "PR #7"}]}), encoding="utf-8")
    status, out = report(tmp_path, capsys, "--retired-legs", str(retired))
    assert (status, "missing:" in out) == (0, False), out


def test_results_from_an_earlier_night_do_not_satisfy_require_results(tmp_path: Path, capsys) -> None:
    bench(tmp_path, range(55, TONIGHT + 1), "8.1.RC1")
    results(tmp_path / "conformance", "8.1.RC1", "Ascend910B2", TONIGHT - 2)
    status, out = report(tmp_path, capsys, "--require-results", "torchair_npu")
    assert status == 1, out
    assert "conformance torchair_npu: results missing: none from tonight" in out
    assert "missing: A2 · CANN 8.1.RC1 · torch-npu 2.6.0.post2 (torchair_npu): no results since" in out


def test_a_results_pattern_that_matches_nothing_is_an_error(tmp_path: Path, capsys) -> None:
    bench(tmp_path, range(59, TONIGHT + 1), "8.1.RC1")
    status, out = report(tmp_path, capsys, "--conformance", str(tmp_path / "typo" / "*.json"))
    assert status == 2, out
    assert "matches no results file" in out and "typo" in out
    assert not (tmp_path / "out" / "index.html").exists(), "nothing is rendered"


def test_a_failed_leg_that_uploaded_nothing_makes_the_night_red(tmp_path: Path, capsys) -> None:
    # The matrix ran A2 and A3 tonight; the A3 leg failed before writing anything (its runner lost the NPU).
    bench(tmp_path, range(55, TONIGHT + 1), "8.2.RC1")
    results(tmp_path / "conformance", "8.2.RC1", "Ascend910B2", TONIGHT)
    legs = tmp_path / "legs.json"
    legs.write_text(json.dumps([
        {"soc": "A2", "image": "ascendai/cann:8.2.rc1-910b", "cann": "8.2.rc1", "torch_npu": "2.6.0.post2"},
        {"soc": "A3", "image": "ascendai/cann:8.2.rc1-a3", "cann": "8.2.RC1", "torch_npu": "2.6.0.post2"}]),
        encoding="utf-8")
    status, out = report(tmp_path, capsys, "--expected-legs", str(legs), "--since", "2026-03-03T12:00:00Z")
    assert status == 1, out
    assert "missing: A3 · CANN 8.2.RC1 · torch-npu 2.6.0.post2 (torchair_npu): no results and no benchmarks " \
           "since 2026-03-03T12:00:00Z (never ran)" in out
    assert "missing: A2" not in out


def test_staleness_is_keyed_by_the_whole_environment(tmp_path: Path, capsys) -> None:
    # Same implementation and CANN, another SoC: A3 benchmarked tonight says nothing about the A2 results' age,
    # but A3's own results, from two nights ago, are stale.
    bench(tmp_path, range(58, TONIGHT + 1), "8.1.RC1")
    bench(tmp_path, range(58, TONIGHT + 1), "8.1.RC1", soc=A3)
    results(tmp_path / "conformance", "8.1.RC1", "Ascend910B2", TONIGHT)
    results(tmp_path / "conformance", "8.1.RC1", A3, TONIGHT - 2)
    status, out = report(tmp_path, capsys)
    assert status == 1, out
    # A3's results are from an earlier night: its leg is missing tonight; A2's are tonight's
    red = [line for line in out.splitlines() if line.startswith("red: ")]
    assert len(red) == 1 and "missing: A3 · CANN 8.1.RC1" in red[0] and "no results since" in red[0], out


def test_the_published_retired_legs_file_is_valid_and_a_bad_one_is_named(tmp_path: Path) -> None:
    from torchair_conformance.report import legs

    path = Path(__file__).resolve().parents[2] / "reports" / "retired-legs.json"
    assert isinstance(legs.load_retired(str(path)), list)
    bad = tmp_path / "retired.json"
    bad.write_text(json.dumps({"retired": [{"match": {"chip": "A2"}, "reason": "r", "reviewed": "PR #1"}]}),
                   encoding="utf-8")
    with pytest.raises(legs.LegsError, match=r"retired\[0\]: needs a non-empty 'match' object over"):
        legs.load_retired(str(bad))
    assert legs.load_retired(str(tmp_path / "absent.json")) == []


def test_socs_compare_by_family_and_a_bad_expected_leg_is_named(tmp_path: Path) -> None:
    from torchair_conformance.report import legs

    assert [legs.soc_family(n) for n in ("Ascend910B2", "Ascend910B4", "Ascend910_9391", "A3", "AMD EPYC", None)] == [
        "A2", "A2", "A3", "A3", "AMD EPYC", None]
    assert legs.Leg.of("x", "Ascend910_9392", "8.2.rc1", "2.14.0+gitabc") == legs.Leg("x", "A3", "8.2.RC1", "2.14.0")
    path = tmp_path / "legs.json"
    path.write_text(json.dumps([{"soc": "A2", "cann": "8.2", "torch_npu": "2.14.0"}]), encoding="utf-8")
    with pytest.raises(legs.LegsError, match=r"legs.json \[0\]: '8.2' is not a CANN version"):
        legs.load_expected(str(path))
    with pytest.raises(legs.LegsError, match="does not exist"):
        legs.load_expected(str(tmp_path / "absent.json"))
