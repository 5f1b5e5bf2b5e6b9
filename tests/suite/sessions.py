"""Conformance-suite sessions run in the background of ``pytest tests``.

Some tests of the suite's teeth run the whole suite (or one clause of it) in a fresh pytest process: against the
reference (``test_conformance_reference.py``) and against each mutant (``test_conformance_mutants.py``). Such a
test carries ``@pytest.mark.suite_session(SuiteRun(...))``. As soon as collection ends, every selected session is
started in a pool (``tests/conftest.py``); the tests that wait for them run last. While the other tests run, the
pool keeps one core for them and uses the rest (at least one session at a time), or every core from the start
with ``$TORCHAIR_SESSIONS_EVERY_CORE`` set; once the waiting tests are reached, it takes every core. Sessions a
failing run (``-x``) leaves unfinished are cancelled or killed.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MUTANTS_DIR = ROOT / "tests" / "mutants"
TIMEOUT_S = 1800
#: every session's folder receives the GE graphs upstream's CPU adapter loads (impl/torchair_cpu/standins/_graph.py)
GE_GRAPHS_ENV, GE_GRAPHS = "TORCHAIR_CPU_GE_GRAPHS", "ge-graphs"

Outcome = tuple[int, dict | None, str]


@dataclass(frozen=True)
class SuiteRun:
    """One suite session: ``impl``, only ``clauses`` (all when empty), under hypothesis ``profile``; ``own_folder``
    runs it in an empty folder (its own hypothesis database) rather than the repository root."""

    key: str
    impl: str
    clauses: tuple[str, ...] = ()
    profile: str = "dev"
    extra_args: tuple[str, ...] = ()
    own_folder: bool = False
    #: the suite's test files in the order to run them (the whole `torchair_conformance` folder when empty)
    paths: tuple[str, ...] = ()


#: the suite's real-model files, left out of the background sessions: where the zoo's packages are installed
#: (`tox -e tests-torch2141`, for tests/zoo's CI slice) they would add minutes to CI's longest leg; `tox -e zoo`,
#: `tox -e upstream` and the nightly run them
WITHOUT_ZOO = tuple(f"--ignore={ROOT / 'torchair_conformance' / name}"
                    for name in ("test_zoo.py", "test_export_zoo.py"))


#: the suite's costliest file (hundreds of cold and warm process pairs); a mutant of CC-12 that it catches after
#: minutes, `test_single_trace.py` catches in seconds
SLOW_FILES = frozenset({"test_guards.py"})


def slow_files_last() -> tuple[str, ...]:
    """The suite's test files, `SLOW_FILES` last: a session that stops at its first failure (``-x``, a mutant's)
    then reaches the cheap tests of its clauses before the costly ones."""
    files = sorted((ROOT / "torchair_conformance").rglob("test_*.py"))  # a test file in a sub-folder too
    return tuple(str(path) for path in sorted(files, key=lambda path: path.name in SLOW_FILES))


def suite_command(impl: str, json_path: Path, clauses: Sequence[str] = (), profile: str = "dev",
                  extra_args: Sequence[str] = (), paths: Sequence[str] = ()) -> list:
    """``python -m pytest torchair_conformance --impl IMPL -x -q [--clause ID ...]`` (or `paths` in that order
    instead of the folder), writing its JSON results."""
    targets = list(paths) or [str(ROOT / "torchair_conformance")]
    return [sys.executable, "-m", "pytest", *targets, "--impl", impl, "-x", "-q",
            *[f"--clause={cid}" for cid in clauses], "-p", "no:cacheprovider", "-p", "no:warnings",
            f"--hypothesis-profile={profile}", f"--conformance-json={json_path}", *extra_args]


def suite_env() -> dict:
    """The environment of a suite session: the reference and the repository (which holds ``tests.mutants``) first
    on PYTHONPATH; no implementation named by the environment."""
    env = dict(os.environ)
    path = [str(ROOT / "impl"), str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(path)
    env.pop("TORCHAIR_CONFORMANCE_IMPL", None)
    return env


class Background:
    """The selected suite sessions, each started on submission in a pool of one thread per core; `slots` of them
    run at once until `take_every_core` (then one per core)."""

    def __init__(self, cores: int, keep_one: bool = True) -> None:
        self._cores = max(1, cores)
        self._start = max(1, self._cores - 1) if keep_one else self._cores
        self._slots = threading.Semaphore(self._start)
        self._opened = False
        self._lock = threading.Lock()
        self._live: set = set()
        self._closed = False
        self._folder = Path(tempfile.mkdtemp(prefix="torchair-suite-sessions-"))
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=self._cores,
                                                           thread_name_prefix="suite-session")
        self.futures: dict[str, concurrent.futures.Future] = {}
        #: each ended session's wall time in seconds (what `pytest tests` prints at its end, to keep CI's time known)
        self.walls: dict[str, float] = {}

    def submit(self, run: SuiteRun) -> None:
        if run.key not in self.futures:
            self.futures[run.key] = self._pool.submit(self._run, run)

    def folder(self, run: SuiteRun) -> Path:
        """The session's own folder (its results, and the GE graphs it ran under ``GE_GRAPHS``)."""
        return self._folder / run.key

    def take_every_core(self) -> None:
        with self._lock:
            if not self._opened:
                self._opened = True
                for _ in range(self._cores - self._start):
                    self._slots.release()

    def close(self) -> None:
        """Cancel what has not started and kill what runs (sessions no test waits for any more)."""
        with self._lock:
            self._closed = True
            live = list(self._live)
        for future in self.futures.values():
            future.cancel()
        for proc in live:
            proc.kill()
        self._pool.shutdown(wait=True)
        shutil.rmtree(self._folder, ignore_errors=True)

    def _run(self, run: SuiteRun) -> Outcome:
        with self._slots:
            work = self._folder / run.key
            work.mkdir()
            return self._session(run, work)

    def _session(self, run: SuiteRun, work: Path) -> Outcome:
        json_path = work / "results.json"
        command = suite_command(run.impl, json_path, run.clauses, run.profile, run.extra_args, run.paths)
        with self._lock:
            if self._closed:
                raise RuntimeError(f"suite session {run.key} cancelled: the test run ended")
            env = {**suite_env(), GE_GRAPHS_ENV: str(work / GE_GRAPHS)}
            proc = subprocess.Popen(command, cwd=work if run.own_folder else ROOT, env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self._live.add(proc)
        started = time.monotonic()
        try:
            stdout, stderr = proc.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
        finally:
            with self._lock:
                self._live.discard(proc)
                self.walls[run.key] = time.monotonic() - started
        document = json.loads(json_path.read_text()) if json_path.exists() else None
        return proc.returncode, document, stdout[-4000:] + stderr[-4000:]


#: set (to anything) where the sessions, not the foreground, are the longest part (tox -e tests-torch2141): they take
#: every core from the start instead of leaving one to the foreground
EVERY_CORE_ENV = "TORCHAIR_SESSIONS_EVERY_CORE"


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
