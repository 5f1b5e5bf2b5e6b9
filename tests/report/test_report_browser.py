"""The rendered report opened in headless Chromium: every chart image loads, the tables render, at 1400 px the
`traced` column (CC-14's evidence) is on screen, and at phone width the charts drawn for a phone are the ones shown
and nothing but the tables' own scroll boxes is wider than the screen."""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("matplotlib", reason="the report's charts need matplotlib (the `report` extra)")
pytest.importorskip("jinja2", reason="the report's pages need jinja2 (the `report` extra)")

from tests.report import nightly_sample as report_nightly_sample  # noqa: E402
from tests.report.test_report_render import render  # noqa: E402
from torchair_conformance.report import cli  # noqa: E402 - only once the report's extra is known to be there

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (Debian: apt-get install chromium)")


def dom(page: Path, width: int) -> str:
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", "--allow-file-access-from-files", f"--window-size={width},900",
             "--virtual-time-budget=5000", "--dump-dom", page.as_uri()],
            capture_output=True, text=True, timeout=120,
        )
    assert "<body" in done.stdout, f"Chromium printed no DOM (exit {done.returncode}): {done.stderr[-2000:]}"
    return done.stdout


def test_charts_and_tables_render_in_headless_chromium(tmp_path: Path) -> None:
    out = tmp_path / "report"
    assert render(out) == 0
    page = dom(out / "index.html", 1400)
    shown = re.search(r'data-charts-shown="(\d+)/(\d+)"', page)
    assert shown, f"the page's load handler did not run: {page[:500]}"
    assert shown.group(1) == shown.group(2) and int(shown.group(2)) == 5, f"charts shown: {shown.group(0)}"
    assert page.count("<table") >= 10 and "cache_compile warm" in page
    assert 'data-charts-narrow="0/5"' in page, "a desk gets the wide charts"
    traced = re.search(r'data-traced-right="(\d+)/(\d+)"', page)
    assert traced and int(traced.group(2)) == 3 and int(traced.group(1)) <= 1400, f"traced off screen: {traced}"


def test_sixty_nights_fit_a_phone_screen(tmp_path: Path) -> None:
    root = report_nightly_sample.write(tmp_path)
    assert cli.main(["--history", str(root / "history"), "--conformance", str(root / "conformance" / "*.json"),
                     "--out", str(root / "out")]) == 0
    page = dom(root / "out" / "index.html", 390)
    shown = re.search(r'data-charts-shown="(\d+)/(\d+)"', page)
    assert shown and shown.group(1) == shown.group(2) == "9", shown
    assert 'data-charts-narrow="9/9"' in page, "a phone gets the charts drawn for its width"
    width = re.search(r'data-page-width="(\d+)/(\d+)"', page)
    assert width and int(width.group(1)) <= int(width.group(2)), f"page wider than the screen: {width.group(0)}"


def test_the_matrix_of_ten_cann_releases_fits_1400_px(tmp_path: Path) -> None:
    """Tonight's two legs, the last three CANN releases beside them, the older ones in the archive: nothing of the
    matrix is off-screen at 1400 px."""
    from tests.report.test_report_night_view import many_releases

    many_releases(tmp_path)
    legs = tmp_path / "legs.json"
    legs.write_text('[{"soc": "A2", "cann": "9.1.0", "torch_npu": "2.14.0"}, '
                    '{"soc": "A3", "cann": "9.1.0", "torch_npu": "2.14.0"}]', encoding="utf-8")
    cli.main(["--history", str(tmp_path / "history"), "--conformance", str(tmp_path / "conformance" / "*.json"),
              "--out", str(tmp_path / "out"), "--expected-legs", str(legs), "--since", "2026-03-04T00:00:00Z"])
    page = dom(tmp_path / "out" / "index.html", 1400)
    fit = re.search(r'data-matrix-right="(\d+)/(\w+)"', page)
    assert fit and fit.group(2) == "fits" and int(fit.group(1)) <= 1400, fit and fit.group(0)
    width = re.search(r'data-page-width="(\d+)/(\d+)"', page)
    assert width and int(width.group(1)) <= int(width.group(2)), width.group(0)
