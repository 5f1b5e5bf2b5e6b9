"""The report rendered from the checked-in sample histories: pages, charts, versions, regressions, gate."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("matplotlib", reason="the report's charts need matplotlib (the `report` extra)")

from conformance.report import cli  # noqa: E402 - only once matplotlib is known to be there

SAMPLES = Path(__file__).parent / "data" / "report_samples"
PNG = b"\x89PNG\r\n\x1a\n"


def render(out: Path, *extra: str) -> int:
    return cli.main(["--history", str(SAMPLES / "history"), "--conformance", str(SAMPLES / "conformance" / "*.json"),
                     "--out", str(out), *extra])


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    assert render(out) == 0
    return out


def test_pages_reference_only_local_png_charts(rendered: Path) -> None:
    page = (rendered / "index.html").read_text(encoding="utf-8")
    sources = re.findall(r'<img class="chart" src="([^"]+)"', page)
    assert len(sources) == 5, sources  # 3 latest runs, 1 trend (the series with 3 runs), 1 versions view
    for src in sources:
        assert (rendered / src).read_bytes().startswith(PNG), src
    assert not re.search(r'(src|href)="(https?:)?//', page), "the page must load nothing from the network"
    readme = (rendered / "README.md").read_text(encoding="utf-8")
    assert sorted(re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme)) == sorted(sources)


def test_series_tables_carry_medians_ranges_ratios_and_targets(rendered: Path) -> None:
    page = (rendered / "index.html").read_text(encoding="utf-8")
    assert page.count("<h2 id=\"tiny-eager-dyn-") == 1 and page.count("<h2 id=\"gpt-small-ge-dyn-") == 2
    assert "warm / cold compile-or-load" in page and "≤ 0.0333" in page and "≤ 1.15" in page
    assert re.search(r"\d+\.\d+ s \[\d+\.\d+ s–\d+\.\d+ s\]", page), "medians with [min–max]"
    assert "skipped: torch 2.13.0+cpu: sample skip reason" in page
    assert "per-call overhead (eager graph)" in page and "0.8 µs" in page


def test_cann_versions_side_by_side(rendered: Path) -> None:
    readme = (rendered / "README.md").read_text(encoding="utf-8")
    (header,) = [line for line in readme.splitlines() if line.startswith("| figure |") and "CANN 8" in line]
    assert header.index("CANN 8.0.RC3") < header.index("CANN 8.1.RC1"), header
    assert "torch_npu 2.6.0.post1" in header and "torch_npu 2.6.0.post2" in header


def test_regression_flagged_and_gate_fails(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert render(tmp_path, "--gate") == 1
    out = capsys.readouterr().out
    assert "regression: impl-warm ttfo_s" in out
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "×1.6" in page or "×1.7" in page


def test_gate_passes_without_the_regressed_series(tmp_path: Path) -> None:
    history = tmp_path / "history"
    history.mkdir()
    for name in ("cann-8.0.RC3.jsonl", "cann-8.1.RC1.jsonl"):
        shutil.copy(SAMPLES / "history" / name, history / name)
    assert cli.main(["--history", str(history), "--out", str(tmp_path / "out"), "--gate"]) == 0


def test_unreadable_history_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "cpu-torch-x.jsonl").write_text("not json\n", encoding="utf-8")
    assert cli.main(["--history", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert "cpu-torch-x.jsonl:1" in capsys.readouterr().err


def test_conformance_matrix_rendered(rendered: Path) -> None:
    page = (rendered / "index.html").read_text(encoding="utf-8")
    matrix = page[page.index('<table class="matrix">'):]
    assert '<th>CC-14</th><td class="skip"' in matrix and '<td class="fail"' in matrix
    assert '<td class="xpass"' in matrix and '<td class="xfail"' in matrix
