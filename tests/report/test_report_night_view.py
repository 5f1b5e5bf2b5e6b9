"""What a night shows (issue 33, items 3, 5, 6, 7): a leg's verdict judges only that leg and tonight; a leg that did
not run is shown greyed with when it last ran and named as missing; the matrix puts tonight's legs first, the last
CANN releases next in CANN order and the rest in an archive; a retired leg never turns a night red; and the small
points (case-insensitive --compare, short series titles, stale series last, the published pages' command)."""
from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

pytest.importorskip("matplotlib", reason="the report's charts need matplotlib (the `report` extra)")

from tests.report import nightly_sample as sample  # noqa: E402
from torchair_conformance.report import cli, history  # noqa: E402 - only once the report's extra is there

ROOT = Path(__file__).resolve().parents[2]
#: night 60 of the sample is 2026-03-04; its results finish at 01:30 UTC, its benchmarks run at 02:00
NIGHT_60 = 1772587800.0
A3 = "Ascend910_9391"


def results(folder: Path, cann: str, soc: str, finished: float, outcome: str = "passed",
            torch_npu: str = "2.6.0.post2") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    doc = {"implementation": "torchair_npu", "device": "npu", "finished": finished, "exit_status": 0,
           "versions": {"torch": "2.6.0", "torch_npu": torch_npu, "cann": cann, "soc": soc},
           "tests": [{"test": "torchair_conformance/test_paths.py::test_path_formula", "clauses": ["CC-8"],
                      "outcome": outcome, "message": "AssertionError: the path" if outcome == "failed" else None}]}
    (folder / f"torchair_npu-npu-cann-{cann}-soc-{soc}.json").write_text(json.dumps(doc), encoding="utf-8")


def bench(root: Path, nights: range, cann: str, soc: str = "Ascend910B2", hour: int = 2,
          slower: dict[int, float] | None = None) -> None:
    rng = random.Random(len(cann) + nights.start)
    for night in nights:
        records = sample.night_records(night, cann, "2.6.0.post2", rng=rng, hour=hour,
                                       slower_load=(slower or {}).get(night, 1.0))
        for record in records:
            record.env = {**record.env, "soc": soc}
        history.append(root / "history", records)


def report(root: Path, capsys: pytest.CaptureFixture, *extra: str) -> tuple[int, str]:
    status = cli.main(["--gate", "--history", str(root / "history"), "--conformance",
                       str(root / "conformance" / "*.json"), "--out", str(root / "out"),
                       "--accepted", str(root / "absent.json"), "--retired-legs", str(root / "retired.json"),
                       *extra])
    captured = capsys.readouterr()
    return status, captured.out + captured.err


def legs_file(root: Path, *legs: tuple[str, str]) -> str:
    path = root / "legs.json"
    path.write_text(json.dumps([{"soc": soc, "cann": cann, "torch_npu": "2.6.0.post2"} for soc, cann in legs]),
                    encoding="utf-8")
    return str(path)


def test_a_legs_verdict_judges_only_that_leg_and_tonight(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # A2 regressed (warm load +80 %) on night 59 at 02:00; the A3 leg runs 23 h later, night 60 at 01:00, with the
    # data branch's history, which holds A2's night.
    bench(tmp_path, range(40, 60), "8.2.RC1", slower={59: 1.8})
    bench(tmp_path, range(40, 61), "8.2.RC1", soc=A3, hour=1)
    results(tmp_path / "conformance", "8.2.RC1", A3, NIGHT_60 - 1800)
    a3 = legs_file(tmp_path, ("A3", "8.2.RC1"))
    status, out = report(tmp_path, capsys, "--expected-legs", a3, "--since", "2026-03-04T00:00:00Z")
    assert status == 0, out
    assert "stale series: last run 2026-03-03T02:00:00Z" in out, "A2's night is shown, not judged"
    # the fan-in of A2's own night judges it, and it is red
    results(tmp_path / "conformance", "8.2.RC1", "Ascend910B2", NIGHT_60 - 86400 - 1800)
    a2 = legs_file(tmp_path, ("A2", "8.2.RC1"))
    status, out = report(tmp_path, capsys, "--expected-legs", a2, "--since", "2026-03-03T00:00:00Z")
    assert status == 1 and "red: gate: warm load ÷ cold compile" in out, out


def missing_leg_night(root: Path) -> None:
    """A2 and A3 are expected tonight; A2's runner was offline: its results and benchmarks are last night's, and its
    last results had a failure."""
    bench(root, range(50, 60), "8.2.RC1")
    bench(root, range(50, 61), "8.2.RC1", soc=A3)
    results(root / "conformance", "8.2.RC1", "Ascend910B2", NIGHT_60 - 86400, outcome="failed")
    results(root / "conformance", "8.2.RC1", A3, NIGHT_60)


def test_a_missing_legs_last_results_are_stale_not_counted_and_named(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture) -> None:
    missing_leg_night(tmp_path)
    legs = legs_file(tmp_path, ("A2", "8.2.RC1"), ("A3", "8.2.RC1"))
    status, out = report(tmp_path, capsys, "--expected-legs", legs, "--since", "2026-03-04T00:00:00Z")
    assert status == 1 and "red: missing: A2 · CANN 8.2.RC1" in out, out
    assert "1 failed" not in out, "last night's failure is not tonight's"
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    banner = page[page.index('<div class="banner'):page.index('<h2 id="slower">')]
    assert "Ascend910B2" not in banner.split('<div class="counts note">')[1], "not counted in tonight's figures"
    assert "1 results document(s) from tonight (1 tests, 1 from earlier nights not counted)" in banner
    assert "Did not run tonight: A2 · CANN 8.2.RC1 · torch-npu 2.6.0.post2 (torchair_npu)" in banner
    header = page[page.index('<table class="matrix">'):page.index("</thead>", page.index('<table class="matrix">'))]
    assert re.search(r'<th class="absent" title="[^"]*Ascend910B2">torchair_npu · A2 · CANN 8.2.RC1 · torch-npu '
                     r'2.6.0.post2 <span class="badge stale">not run tonight</span><br><span class="note">last ran '
                     r'2026-03-03T01:30:00Z', header), header
    doc = json.loads((tmp_path / "out" / "verdict.json").read_text(encoding="utf-8"))
    assert doc["changes"]["missing_legs"] == ["A2 · CANN 8.2.RC1 · torch-npu 2.6.0.post2 (torchair_npu)"]
    a2 = next(leg for leg in doc["legs"] if leg["versions"]["soc"] == "Ascend910B2")
    assert (a2["current"], a2["absent"]) == (False, "last ran 2026-03-03T01:30:00Z")
    assert doc["checked"]["results"] == 1 and doc["checked"]["tests"] == 1


#: ten CANN releases a lab has run, oldest first (8.2.RC1.B010 before 8.2.RC1, 8.10 after 8.5)
RELEASES = ["8.0.RC3", "8.1.RC1", "8.2.RC1.B010", "8.2.RC1", "8.3.RC1", "8.5.0", "8.10.RC1", "9.0.0-beta.1", "9.0.0"]


def many_releases(root: Path) -> None:
    for i, version in enumerate(RELEASES):
        results(root / "conformance", version, "Ascend910B2", NIGHT_60 - (len(RELEASES) - i) * 86400 * 3)
    for soc in ("Ascend910B2", A3):  # tonight: 9.1.0 on A2 and A3
        results(root / "conformance", "9.1.0", soc, NIGHT_60, torch_npu="2.14.0")
    bench(root, range(58, 61), "9.1.0")


def test_the_matrix_puts_tonights_legs_first_then_the_last_releases_in_cann_order(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    many_releases(tmp_path)
    legs = tmp_path / "legs.json"
    legs.write_text(json.dumps([{"soc": s, "cann": "9.1.0", "torch_npu": "2.14.0"} for s in ("A2", "A3")]),
                    encoding="utf-8")
    report(tmp_path, capsys, "--expected-legs", str(legs), "--since", "2026-03-04T00:00:00Z")
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")

    def heads(cls: str) -> list[str]:
        table = page[page.index(f'<table class="{cls}">'):]
        table = table[:table.index("</thead>")]
        return re.findall(r"CANN ([\w.-]+) · torch-npu [\w.]+(?: ·)? ?(?:<| )", table)

    assert heads("matrix") == ["9.1.0", "9.1.0", "8.5.0", "8.10.RC1", "9.0.0-beta.1", "9.0.0"]
    assert 'title="torchair_npu · torch 2.6.0 · torch_npu 2.14.0 · CANN 9.1.0 · Ascend910_9391"' in page
    assert heads("matrix-archive") == ["8.0.RC3", "8.1.RC1", "8.2.RC1.B010", "8.2.RC1", "8.3.RC1"]
    assert "Archive: 5 older results" in page


def test_a_retired_leg_never_turns_a_night_red(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    missing_leg_night(tmp_path)  # A2's last results failed, and it did not run tonight
    status, out = report(tmp_path, capsys, "--since", "2026-03-04T00:00:00Z")
    assert status == 1 and "missing: A2" in out, "expected by default: it ran before"
    (tmp_path / "retired.json").write_text(json.dumps({"retired": [
        {"match": {"soc": "A2"}, "reason": "A2 runners moved to another lab", "reviewed": "PR #9"}]}), encoding="utf-8")
    status, out = report(tmp_path, capsys, "--since", "2026-03-04T00:00:00Z")
    assert status == 0 and "red:" not in out, out
    doc = json.loads((tmp_path / "out" / "verdict.json").read_text(encoding="utf-8"))
    assert doc["changes"]["missing_legs"] == [], "a retired leg is no news"


def test_small_points_compare_case_titles_and_stale_series_last(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    root = sample.write(tmp_path)
    args = ["--history", str(root / "history"), "--conformance", str(root / "conformance" / "*.json"),
            "--out", str(root / "out")]
    assert cli.main(args + ["--compare", "8.1.rc1", "8.10.rc1"]) == 0, capsys.readouterr().err
    page = (root / "out" / "index.html").read_text(encoding="utf-8")
    assert "CANN 8.1.RC1 vs CANN 8.10.RC1" in page
    titles = re.findall(r'<h2 id="[\w.-]+-[0-9a-f]{8}">([^<]+)', page)
    assert titles and all(len(t) <= 80 for t in titles), titles
    assert titles[-1].startswith("gpt-small · torchair_npu · A2 · CANN 8.1.RC1"), "the stale series come last"
    assert titles.index(next(t for t in titles if "8.10.RC1" in t)) < titles.index(titles[-1])
    assert 'stale</span></h2>' in page


def test_the_published_pages_and_docs_name_the_renamed_package() -> None:
    for path in [ROOT / "README.md", *sorted((ROOT / "reports").glob("*.md")), ROOT / "reports" / "index.html",
                 *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "tests" / "report" / "data").rglob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"python -m conformance\b", text), f"{path}: python -m conformance"


def test_the_readme_says_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8")
    run_ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for env in ("tests", "tests-torch2141"):
        in_ci = f"tox -e {env}\n" in ci or f"tox -e {env} " in ci
        assert (f"tox -e {env}" in run_ci), env
        row = next(line for line in readme.splitlines() if line.startswith(f"| `tox -e {env}` |")) \
            if env != "tests" else ""
        if not in_ci and row:
            assert "ci.yml` runs only `tox -e tests`" in row, row
