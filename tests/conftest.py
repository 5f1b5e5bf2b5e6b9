"""Fixtures shared by the tests of torchair_ref."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

PROGRAMS = Path(__file__).parent / "programs"


def run_program(job: dict[str, Any], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> dict:
    """Run tests/programs/cache_run.py in a fresh interpreter and return its JSON report."""
    full_env = {**os.environ, **(env or {})}
    done = subprocess.run(
        [sys.executable, str(PROGRAMS / "cache_run.py"), json.dumps(job)],
        cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout,
    )
    return program_report(done, "cache_run.py")


def program_report(done: subprocess.CompletedProcess, program: str) -> dict:
    """The JSON report a program of tests/programs printed last (`REPORT {...}`), with its stderr beside it; an
    AssertionError with its whole output when it failed or printed none."""
    lines = [line for line in done.stdout.splitlines() if line.startswith("REPORT ")]
    if done.returncode != 0 or not lines:
        raise AssertionError(f"{program} exited {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}")
    report = json.loads(lines[-1][len("REPORT "):])
    report["stderr"] = done.stderr
    return report


@pytest.fixture
def cache_program() -> Callable[..., dict]:
    return run_program


@pytest.fixture(autouse=True)
def _isolated_cache_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads or writes a cache outside its own tmp_path."""
    monkeypatch.delenv("TORCHAIR_CACHE_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
