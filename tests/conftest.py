"""Fixtures shared by the tests of torchair_ref."""
from __future__ import annotations

import functools
import importlib.util
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.suite import sessions as suite_sessions
from torchair_conformance import process

PROGRAMS = Path(__file__).parent / "programs"
_ROOT = str(Path(__file__).resolve().parent.parent)


def program_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a program of tests/programs: `tests` and this torchair_ref importable from any folder."""
    origin = importlib.util.find_spec("torchair_ref").origin
    return process.child_env([_ROOT, str(Path(origin).resolve().parent.parent)], extra)


def start_program(program: str, job: dict[str, Any], folder: Path, cwd: Path, env: Mapping[str, str] | None = None,
                  python_flags: Sequence[str] = ()) -> process.Started:
    """`python -m tests.programs.<program>` on `job` (`torchair_conformance.process`), its files in `folder`, run
    in `cwd`."""
    return process.start(f"tests.programs.{program}", job, folder, cwd=cwd, env=program_env(env),
                         python_flags=python_flags)


def program_report(started: process.Started, timeout: float = process.DEFAULT_TIMEOUT_S) -> dict:
    """A started program's report, with its stderr under "stderr"; a ProcessError with its output when it failed
    or replied nothing."""
    reply = started.reply(timeout)
    if reply.returncode:
        raise process.ProcessError(f"{started.module} exited {reply.returncode} after its report\n"
                                   f"stdout:\n{reply.stdout[-3000:]}\nstderr:\n{reply.stderr[-6000:]}")
    return {**reply.result, "stderr": reply.stderr}


def run_program(program: str, job: dict[str, Any], cwd: Path, env: Mapping[str, str] | None = None,
                timeout: float = process.DEFAULT_TIMEOUT_S, python_flags: Sequence[str] = ()) -> dict:
    """Run tests/programs/<program>.py on `job` in a fresh interpreter and return its report (`program_report`)."""
    with tempfile.TemporaryDirectory(prefix="torchair-program-") as folder:
        return program_report(start_program(program, job, Path(folder), cwd, env, python_flags), timeout)


@pytest.fixture
def cache_program() -> Callable[..., dict]:
    """`run_program` of tests/programs/cache_run.py: `cache_program(job, cwd, env=None, timeout=600)`."""
    return functools.partial(run_program, "cache_run")


@pytest.fixture(autouse=True)
def _isolated_cache_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads or writes a cache outside its own tmp_path."""
    monkeypatch.delenv("TORCHAIR_CACHE_HOME", raising=False)
    monkeypatch.chdir(tmp_path)


# -- suite sessions in the background (tests/suite/sessions.py) ----------------------------------------------------

_BACKGROUND = pytest.StashKey[suite_sessions.Background]()


def _suite_run(item: pytest.Item) -> suite_sessions.SuiteRun | None:
    mark = item.get_closest_marker("suite_session")
    return mark.args[0] if mark is not None else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tests that wait for a suite session run last, so that the others run while the sessions do."""
    items[:] = [i for i in items if _suite_run(i) is None] + [i for i in items if _suite_run(i) is not None]


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start every selected suite session now (not with --collect-only)."""
    runs = [run for run in map(_suite_run, session.items) if run is not None]
    if runs and not session.config.option.collectonly:
        background = suite_sessions.Background(suite_sessions.cores(),
                                               keep_one=not os.environ.get(suite_sessions.EVERY_CORE_ENV))
        session.config.stash[_BACKGROUND] = background
        for run in runs:
            background.submit(run)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Each suite session's wall time, longest first: where CI's time goes (it must stay under 40 minutes)."""
    background = config.stash.get(_BACKGROUND, None)
    if background is not None and background.walls:
        walls = sorted(background.walls.items(), key=lambda item: -item[1])
        terminalreporter.write_line(f"suite sessions: {len(walls)}, {sum(w for _, w in walls):.0f} s in all; "
                                    + ", ".join(f"{key} {wall:.0f} s" for key, wall in walls))


def pytest_sessionfinish(session: pytest.Session) -> None:
    background = session.config.stash.get(_BACKGROUND, None)
    if background is not None:
        background.close()


@pytest.fixture
def suite_session(request: pytest.FixtureRequest) -> suite_sessions.Outcome:
    """The outcome of the test's own suite session (its `suite_session` mark): (exit code, JSON results, output
    tail). From the first test that waits, the sessions take every core."""
    run = _suite_run(request.node)
    assert run is not None, f"{request.node.nodeid} uses the suite_session fixture without a suite_session mark"
    background = request.config.stash[_BACKGROUND]
    background.take_every_core()
    return background.futures[run.key].result()


@pytest.fixture
def suite_session_folder(request: pytest.FixtureRequest, suite_session: suite_sessions.Outcome) -> Path:
    """The folder of the test's own suite session, once it ended: what it left there (``sessions.GE_GRAPHS``)."""
    return request.config.stash[_BACKGROUND].folder(_suite_run(request.node))
