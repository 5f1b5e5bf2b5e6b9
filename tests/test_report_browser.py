"""The rendered report opened in headless Chromium: every chart image loads and the tables render."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("matplotlib", reason="the report's charts need matplotlib (the `report` extra)")

from tests.test_report_render import render  # noqa: E402 - only once matplotlib is known to be there

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (Debian: apt-get install chromium)")
def test_charts_and_tables_render_in_headless_chromium(tmp_path: Path) -> None:
    out = tmp_path / "report"
    assert render(out) == 0
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
         "--virtual-time-budget=5000", "--dump-dom", (out / "index.html").as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    dom = done.stdout
    assert "<body" in dom, f"Chromium printed no DOM (exit {done.returncode}): {done.stderr[-2000:]}"
    shown = re.search(r'data-charts-shown="(\d+)/(\d+)"', dom)
    assert shown, f"the page's load handler did not run: {dom[:500]}"
    assert shown.group(1) == shown.group(2) and int(shown.group(2)) == 5, f"charts shown: {shown.group(0)}"
    assert dom.count("<table") >= 10 and "cache_compile warm" in dom
