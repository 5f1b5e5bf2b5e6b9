"""The report rendered from the checked-in samples and the 60-night sample: pages, charts, verdict, gate, matrix."""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

pytest.importorskip("matplotlib", reason="the report's charts need matplotlib (the `report` extra)")
pytest.importorskip("jinja2", reason="the report's pages need jinja2 (the `report` extra)")

from tests.report import nightly_sample as report_nightly_sample  # noqa: E402
from torchair_conformance.report import cli  # noqa: E402 - only once the report's extra is known to be there

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


@pytest.fixture(scope="module")
def nightly(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 60-night, three-CANN sample with its planted warm-load slowdown, rendered."""
    root = report_nightly_sample.write(tmp_path_factory.mktemp("nightly"))
    assert cli.main(["--history", str(root / "history"), "--conformance", str(root / "conformance" / "*.json"),
                     "--out", str(root / "out")]) == 0
    return root / "out"


def test_pages_reference_only_local_png_charts(rendered: Path) -> None:
    page = (rendered / "index.html").read_text(encoding="utf-8")
    sources = re.findall(r'<img class="chart" src="([^"]+)"', page)
    assert len(sources) == 5, sources  # 3 latest runs, 1 trend (the series with 3 runs), 1 versions view
    narrow = re.findall(r'<source media="\(max-width: 700px\)" srcset="([^"]+)">', page)
    assert narrow == [src.replace(".png", "-narrow.png") for src in sources], "a phone gets each chart drawn narrow"
    for src in sources + narrow:
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


def test_verdict_banner_names_the_failing_suite(rendered: Path) -> None:
    page = (rendered / "index.html").read_text(encoding="utf-8")
    banner = page[page.index('<div class="banner'):page.index('<h2 id="slower">')]
    assert 'class="banner red"' in banner and "1 failed, 1 xpassed" in banner
    assert "torchair_ref 0.1.0" in banner and "commit <code>" in banner
    assert "Checked: 2 results document(s) from tonight (10 tests); 2 benchmark series in the latest night (8 gate " \
           "checks: 0 regression(s), 0 suspected, 4 not gated, 0 accepted); performance checked on 1 series: warm " \
           "TTFO ÷ eager TTFO, warm load ÷ cold compile" in banner, "what the verdict rests on, and which figures"


def test_banner_states_the_saving_and_what_changed_since_last_night(nightly: Path) -> None:
    page = (nightly / "index.html").read_text(encoding="utf-8")
    banner = page[page.index('<div class="banner'):page.index('<h2 id="slower">')]
    assert "✘ red: 4 problem(s), 1 figure(s) slower" in banner
    saving = re.search(r"gpt-small · torchair_npu · A2 · CANN 8\.10\.RC1 · torch-npu 2\.6\.0\.post3</b></a>: cold "
                       r"(\d+\.\d\d) s → warm (\d\.\d\d) s: ×(\d+\.\d) faster, (\d+\.\d\d) s saved a start; "
                       r"<span class=\"since\">since "
                       r"2026-03-03: warm [+−][\d.]+ (ms|s) \([+−][\d.]+%\), cold [+−][\d.]+ (ms|s) \([+−][\d.]+%\)",
                       banner)
    assert saving, banner
    cold, warm, factor, saved = (float(saving.group(i)) for i in range(1, 5))
    assert factor == pytest.approx(cold / warm, abs=0.06) and saved == pytest.approx(cold - warm, abs=0.011)
    assert "gate:" not in banner, "the gate's findings are the regressions below, once each"


def test_red_night_fails_the_gate(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert render(tmp_path, "--gate") == 1
    assert "red: conformance torchair" in capsys.readouterr().out


def test_missing_or_empty_history_leaves_the_report_untouched(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "published"
    assert render(out) == 0

    def digest() -> dict[str, str]:
        return {str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(out.rglob("*")) if p.is_file()}

    before = digest()
    (tmp_path / "empty").mkdir()
    (tmp_path / "afile").write_text("", encoding="utf-8")
    for history, message in ((tmp_path / "nonexistent", "does not exist"), (tmp_path / "empty", "holds no records"),
                             (tmp_path / "afile", "is a file")):
        assert cli.main(["--history", str(history), "--out", str(out)]) == 2
        assert message in capsys.readouterr().err
    assert digest() == before


def test_unreadable_history_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "cpu-torch-x.jsonl").write_text("not json\n", encoding="utf-8")
    assert cli.main(["--history", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert "cpu-torch-x.jsonl:1" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_matrix_counts_tests_and_names_failing_ones(nightly: Path) -> None:
    page = (nightly / "index.html").read_text(encoding="utf-8")
    matrix = page[page.index('<table class="matrix">'):]
    header = matrix[:matrix.index("</thead>")]
    assert header.index("CANN 8.1.RC1") < header.index("CANN 8.10.RC1"), "packaging.version order"
    assert "<th>tests</th><td>6: " in matrix
    link = ('<a href="../torchair_conformance/test_warm_start.py">'
            'torchair_conformance/test_warm_start.py::test_warm_untraced</a>')
    assert link in matrix and "the warm start traced" in matrix
    assert "(error)" in matrix and "fixed upstream (xpassed)" in matrix
    for status in ("pass", "fail", "xpass", "xfail", "skip"):
        assert f'<td class="{status}">' in matrix


def test_cann_over_cann_table_and_gate_on_the_nightly_sample(nightly: Path) -> None:
    page = (nightly / "index.html").read_text(encoding="utf-8")
    cann = page[page.index('<h2 id="cann">'):page.index('<h2 id="conformance">')]
    assert cann.index("CANN 8.0.RC3") < cann.index("CANN 8.1.RC1") < cann.index("CANN 8.10.RC1")
    assert re.search(r"warm load</td>.*?\+\d+\.\d ms \(\+\d+\.\d%\)</span></td>", cann), "changes with units"
    slower = page[page.index('<h2 id="slower">'):page.index('<h2 id="changes">')]
    assert slower.count('<div class="regression') == 1, "one slowdown, one entry"
    entry = slower[slower.index('<div class="regression'):]
    assert re.search(r"<b>warm load ÷ cold compile</b> of .*?: 0\.00\d+ → 0\.00\d+ \(×1\.\d\d, "
                     r"limit \+1\d%\)", entry), entry[:600]
    assert entry.count("<li>regression: vs CANN 8.1.RC1") == 1, "one baseline saw it: the previous CANN's nights"
    readme = (nightly / "README.md").read_text(encoding="utf-8")
    assert "**Verdict: red: 4 problem(s), 1 figure(s) slower.**" in readme
    assert readme.count("- **regression: warm load ÷ cold compile**") == 1


def test_sections_answer_first_and_the_matrix_folds(nightly: Path) -> None:
    page = (nightly / "index.html").read_text(encoding="utf-8")
    order = [page.index(f'<h2 id="{name}">') for name in ("slower", "changes", "summary", "cann", "conformance")]
    assert order == sorted(order), "the answers before the benchmarks, the benchmarks before the matrix"
    matrix = page[page.index('<table class="matrix">'):page.index("</table>", page.index('<table class="matrix">'))]
    rows = re.findall(r"<tr><th>([^<]+)</th>", matrix)
    assert rows[:2] == ["clause", "tests"] and rows[2:5] == ["CC-10", "CC-14", "RC-1"], "failing first, each alone"
    assert "CC-8, CC-9" in rows and len(rows) < 2 + 7, f"identical rows folded: {rows}"


def test_phases_show_traced_first_and_no_compile_for_eager(rendered: Path) -> None:
    page = (rendered / "index.html").read_text(encoding="utf-8")
    table = page[page.index("<h3>Phases"):]
    assert re.search(r"<thead><tr><th>variant</th><th>traced</th><th>time to first output</th>", table)
    eager = table[table.index("<tr><td>eager (no compile)</td>"):]
    eager = eager[:eager.index("</tr>")]
    cells = re.findall(r'<td class="num[^"]*">(.*?)</td>', eager)
    assert cells[2] == "–", f"eager compiles nothing: {cells}"
    assert "0.0 µs" not in eager


def test_changed_since_last_night_and_compare(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    root = report_nightly_sample.write(tmp_path)
    args = ["--history", str(root / "history"), "--conformance", str(root / "conformance" / "*.json"),
            "--out", str(root / "out")]
    assert cli.main(args) == 0
    page = (root / "out" / "index.html").read_text(encoding="utf-8")
    assert "No previous night's results to compare with" in page
    previous = json.loads((root / "out" / "verdict.json").read_text(encoding="utf-8"))
    leg = next(leg for leg in previous["legs"] if "8.10.RC1" in leg["label"])
    leg["tests"]["torchair_conformance/test_warm_start.py::test_warm_untraced"] = "passed"
    (tmp_path / "last-night.json").write_text(json.dumps(previous), encoding="utf-8")
    assert cli.main(args + ["--previous", str(tmp_path / "last-night.json"), "--compare", "8.1.RC1", "8.10.RC1"]) == 0
    page = (root / "out" / "index.html").read_text(encoding="utf-8")
    changes = page[page.index('<h2 id="changes">'):page.index('<h2 id="compare">')]
    assert re.search(r'<b class="regressed">new failure</b>: <a href="\.\./torchair_conformance/test_warm_start\.py">'
                     r'torchair_conformance/test_warm_start\.py::test_warm_untraced</a> '
                     r'<span class="note">passed → failed',
                     changes)
    assert "Since last night: 1 new failure" in page
    compare = page[page.index('<h2 id="compare">'):page.index('<h2 id="summary">')]
    assert "CANN 8.1.RC1 vs CANN 8.10.RC1" in compare and "passed → error" in compare
    capsys.readouterr()
    assert cli.main(args + ["--compare", "8.1.RC1", "9.9"]) == 2
    assert "known: 8.0.RC3, 8.1.RC1, 8.10.RC1" in capsys.readouterr().err
    assert cli.main(args + ["--previous", str(tmp_path / "nope.json")]) == 2
    assert "--previous" in capsys.readouterr().err


def test_long_histories_are_bounded_and_dirty_runs_flagged(nightly: Path) -> None:
    page = (nightly / "index.html").read_text(encoding="utf-8")
    assert "Runs: the last 20 of 60" in page and "Runs: the last 20 of 20" in page
    assert page.count("<tr><td>2026-") == 4 * 20, "each of the 4 runs tables shows 20 runs, not 60"
    assert page.count('<span class="badge dirty">dirty</span>') == 1, "night 37 of CANN 8.1 only"
    assert 'href="../history/cann-8.10.RC1.jsonl"' in page, "the full history, relative to --out"
    assert "npu-smi" in page and "firmware" in page
