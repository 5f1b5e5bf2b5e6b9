"""`python -m torchair_conformance nightly`: a night with a failing suite, or no results, exits non-zero (issue 10)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from torchair_conformance import nightly
from torchair_conformance.report import results

ROOT = Path(__file__).resolve().parents[2]
MUTANT = "config_identity_equality"


def test_suite_problems_name_every_red_outcome() -> None:
    def document(*outcomes: tuple[str, str]) -> results.Document:
        return results.Document(tests=[results.TestRecord(test, outcome) for test, outcome in outcomes])

    found = [("r.json", document(("a", "passed"), ("b", "xpassed"), ("c", "error")))]
    problems = nightly.suite_problems(0, found, "torchair_npu")
    assert problems == ["suite: r.json: 1 error, 1 xpassed (xpassed: a known divergence passed, fixed upstream)"]
    assert nightly.suite_problems(0, [("r.json", document(("a", "passed")))], "x") == []
    missing = nightly.suite_problems(4, [], "torchair_npu")
    assert missing[0].startswith("suite: pytest exited 4") and "no fresh results for torchair_npu" in missing[1]


def test_only_this_nights_results_of_the_implementation_count(tmp_path: Path) -> None:
    doc = '{"implementation": "%s", "finished": %s, "tests": []}'
    (tmp_path / "old.json").write_text(doc % ("torchair_npu", 100), encoding="utf-8")
    (tmp_path / "other.json").write_text(doc % ("torchair_ref", time.time()), encoding="utf-8")
    (tmp_path / "new.json").write_text(doc % ("torchair_npu", time.time()), encoding="utf-8")
    found = nightly.fresh_results(str(tmp_path), "torchair_npu", since=time.time() - 60)
    assert [os.path.basename(p) for p, _ in found] == ["new.json"]


@pytest.mark.slow
def test_a_failing_suite_night_exits_non_zero(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the report needs the `report` extra")
    shutil.copytree(ROOT / "reports" / "history", tmp_path / "history")
    shutil.copytree(ROOT / "reports" / "conformance", tmp_path / "conformance")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "impl"), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-m", "torchair_conformance", "nightly", "--impl", f"tests.mutants.{MUTANT}",
         "--model", "none",
         "--results", str(tmp_path / "conformance"), "--history", str(tmp_path / "history"),
         "--out", str(tmp_path / "out"), "--", "-q", "-x", "-k", "test_config", "--hypothesis-profile", "dev",
         "-p", "no:cacheprovider"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "nightly: red: suite: pytest exited 1" in done.stderr
    assert f"tests.mutants.{MUTANT}-cpu.json: 1 failed" in done.stderr
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert 'class="banner red"' in page and "test_configs_with_equal_values_are_equal_however_built" in page


def test_a_runner_expects_only_its_own_leg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The history fetched from the data branch holds every leg; this runner answers for its own one only.
    from torchair_conformance.bench import environment

    info = tmp_path / "ascend_toolkit_install.info"
    info.write_text("package_name=Ascend-cann-toolkit\nversion=8.2.RC1.B010\n", encoding="utf-8")
    environ = {"TORCHAIR_SOC": "A3", "ASCEND_HOME_PATH": str(tmp_path)}
    monkeypatch.setattr(environment, "distribution_version", lambda name: {"torch-npu": "2.14.0"}.get(name))
    assert nightly.this_leg("torchair_npu", True, environ) == [
        {"impl": "torchair_npu", "soc": "A3", "cann": "8.2.RC1.B010", "torch_npu": "2.14.0"}]
    assert nightly.this_leg("torchair_npu", False, environ) == [], "--model none: no benchmarks expected"
    assert nightly.this_leg("torchair_npu", True, {"ASCEND_HOME_PATH": str(tmp_path)}) == [], "no SoC: no leg"
