"""Helpers of the warm-start guard tests (CC-21, CC-22): case scripts, their cold and warm processes, the verdict.

A case is a script (tests/programs/guard_run.py runs it as `__main__`) with a `Model` whose `run` method is cached,
`build(options)`, and two generators of calls: `cold(model)` (what the cold process calls, and writes the cache
for) and `warm(model)` (what a warm process calls: inputs, arguments, module state or code that the cold trace's
guards reject). Phase "warm" makes only the warm calls (the file is judged on the first call: CC-17's stale file);
phase "later" makes the cold calls first (they load the file untraced) then the warm ones (CC-12's recompile).
"""
from __future__ import annotations

import shutil
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import program_report, start_program
from torchair_conformance import process

HEADER = """\
import types

import torch

import torchair_ref

"""

FOOTER = """

def calls(model):
    if PHASE in ("cold", "later"):
        yield from cold(model)
    if PHASE in ("warm", "later"):
        yield from warm(model)


RUN(build, calls)
"""

#: what a warning must say when a warm process traced after all (CC-17's stale file, CC-23's new variant, CC-12's
#: recompile)
RETRACE_WARNINGS = ("Discarding stale cache", "adding a variant", "Skip cache as")


@dataclass(frozen=True)
class Case:
    """A case script's body (between HEADER and FOOTER), its `dynamic`, the words a re-trace warning names, and
    whether it compiles with Inductor (where the eager ATen graph would clamp a slice, Inductor's kernel reads the
    rows the cold trace saw), and whether eager runs on a twin model (a method that changes the state it reads)."""

    body: str
    dynamic: bool = True
    names: Sequence[str] = field(default_factory=tuple)
    inductor: bool = False
    twin: bool = False

    def script(self) -> str:
        return HEADER + textwrap.dedent(self.body).strip("\n") + "\n" + FOOTER


def write(folder: Path, name: str, case: Case) -> Path:
    path = folder / f"{name}.py"
    path.write_text(case.script())
    return path


def start(script: Path, phase: str, case: Case, cwd: Path,
          env: Mapping[str, str | None] | None = None) -> process.Started:
    """Start guard_run on `script` in `cwd` (its `.torchair_cache` is the cwd's); one thread, to share 2 cores."""
    job = {"script": str(script), "phase": phase, "dynamic": case.dynamic, "run_eagerly": not case.inductor,
           "twin": case.twin}
    folder = cwd / f".program-{phase}-{script.stem}"
    shutil.rmtree(folder, ignore_errors=True)
    return start_program("guard_run", job, folder, cwd, env={"OMP_NUM_THREADS": "1", **(env or {})})


def run(script: Path, phase: str, case: Case, cwd: Path,
        env: Mapping[str, str | None] | None = None) -> dict[str, Any]:
    return program_report(start(script, phase, case, cwd, env))


def cold_cache(script: Path, case: Case, cwd: Path, env: Mapping[str, str | None] | None = None
               ) -> dict[str, Any]:
    """The cold process: every call equals eager, and a cache file is written."""
    report = run(script, "cold", case, cwd, env)
    assert all(c["outcome"] == "equal" for c in report["calls"]), report
    files = sorted((cwd / ".torchair_cache").rglob("compiled_module"))
    assert files, f"the cold process wrote no cache file\n{report['warnings']}\n{report['stderr'][-3000:]}"
    return report


def copy_cache(source: Path, target: Path) -> Path:
    """A fresh cwd holding a copy of `source`'s cache (each warm process judges the cold file afresh)."""
    target.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source / ".torchair_cache", target / ".torchair_cache")
    return target


def acceptable(call: dict[str, Any]) -> bool:
    """CC-21: eager's result, or an error where eager raises too; never a value eager did not give."""
    return call["outcome"] == "equal" or (call["outcome"] == "raised" and call["eager_error"] is not None)


def assert_never_served_silently(report: dict[str, Any], names: Sequence[str] = ()) -> None:
    """CC-21 on a warm report: every call acceptable; when the process traced, a warning says why (CC-12 or CC-17)
    and names what differs (`names`, any of them, case-insensitive)."""
    bad = [c for c in report["calls"] if not acceptable(c)]
    assert not bad, f"served silently: {bad}\nwarnings: {report['warnings']}\nstderr: {report['stderr'][-2000:]}"
    if report["unique_graphs"]:
        said = [w for w in report["warnings"] if any(k in w for k in RETRACE_WARNINGS)]
        assert said, f"traced {report['unique_graphs']} graph(s) without a CC-12/CC-17 warning: {report['warnings']}"
        if names:
            text = " ".join(said).lower()
            assert any(n.lower() in text for n in names), f"the warning names none of {list(names)}: {said}"


def assert_loaded(report: dict[str, Any]) -> None:
    """CC-14, CC-20: the process loaded the cold file (its INFO log says so) and its first call equals eager."""
    assert "loaded from" in report["stderr"], report["stderr"][-3000:]
    assert report["calls"][0]["outcome"] == "equal", report["calls"]
