"""The conformance suite has teeth: each mutant (``tests/mutants``, one clause broken) fails a test of that clause.

A mutant is a module ``tests/mutants/<name>.py`` that names the clauses it breaks in ``BREAKS``; it is run as
``--impl tests.mutants.<name>`` against the tests of those clauses only (``--clause ID``), one suite session per
mutant, in its own folder (so that a mutant neither replays the examples that failed the reference, or another
mutant, nor leaves its own in the repository's hypothesis database). The sessions run in the background from the end
of collection (``tests/suite/sessions.py``), the suite's costliest file last (a session stops at its first failure);
each parametrized test waits for its own mutant's session and asserts on it.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Any

import pytest

from tests.suite.sessions import MUTANTS_DIR, SuiteRun, slow_files_last
from torchair_conformance.clauses import load_clauses

MUTANT_FILES = sorted(p for p in MUTANTS_DIR.glob("*.py") if not p.name.startswith("_"))


_REQUIRED = object()


def _constant(path: Path, name: str, default: Any = _REQUIRED) -> Any:
    """The module-level constant ``name`` of mutant ``path``, read without importing it: a mutant may change the
    reference in the process that imports it."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [name]:
            return ast.literal_eval(node.value)
    if default is _REQUIRED:
        raise ValueError(f"{path} sets no {name}: name the SPEC clauses the mutant breaks, e.g. {name} = (\"CC-7\",)")
    return default


# mutant name -> the SPEC clauses it breaks (the suite runs only their tests against it)
MUTANTS = {path.stem: _constant(path, "BREAKS") for path in MUTANT_FILES}
# Mutants whose clause's test gives a directory to another user, which only root can do.
NEEDS_ROOT = {path.stem for path in MUTANT_FILES if _constant(path, "NEEDS_ROOT", False)}


def _mutant_run(name: str) -> SuiteRun:
    return SuiteRun(f"mutant-{name}", f"tests.mutants.{name}", clauses=MUTANTS[name], own_folder=True,
                    paths=slow_files_last())


def _param(name: str):
    if name in NEEDS_ROOT and os.geteuid() != 0:
        return pytest.param(name, marks=pytest.mark.skip(
            reason=f"the {'/'.join(MUTANTS[name])} test needs root to give a directory to another user"))
    return pytest.param(name, marks=pytest.mark.suite_session(_mutant_run(name)))


def test_every_mutant_names_the_clauses_it_breaks():
    known = {c.id for c in load_clauses()[0]}
    bad = {name: breaks for name, breaks in MUTANTS.items()
           if not (isinstance(breaks, tuple) and breaks and set(breaks) <= known)}
    assert MUTANTS and not bad, f"BREAKS must be a tuple of the SPEC clauses the mutant breaks, got {bad}"


@pytest.mark.slow
@pytest.mark.parametrize("name", [_param(name) for name in sorted(MUTANTS)])
def test_suite_rejects_mutant(name, suite_session):
    breaks = MUTANTS[name]
    code, document, output = suite_session
    assert code == pytest.ExitCode.TESTS_FAILED, f"the suite did not fail mutant {name} (exit {code}):\n{output}"
    failed = [(r["test"], r["clauses"]) for r in document["tests"] if r["outcome"] in ("failed", "error")]
    assert failed, f"exit 1 but no failed record for mutant {name}:\n{output}"
    assert all(set(breaks) & set(clauses) for _, clauses in failed), (
        f"mutant {name} breaks {breaks}, but the failing tests check {failed}:\n{output}")
    assert document["implementation"] == f"tests.mutants.{name}"
    assert sorted(document["selected_clauses"]) == sorted(breaks)
