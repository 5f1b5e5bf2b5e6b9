"""CC-11, CC-17: a process SIGKILLed at each step of writing its artifact; the next process is always right.

tests/programs/fault_run.py makes the process SIGKILL itself at one step of writing a ``compiled_module``: before the
temporary file, right after creating it, halfway through writing it, before the rename, after the rename (before
the folder's fsync). The five killed processes run at once, each on its own cache root; then one next process runs
the same model on every root twice (its second pass loads what its first pass left).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.programs.fault_run import STEPS
from tests.reliability.faults import (
    assert_one_valid_cache,
    cache_files,
    finish,
    listing,
    run_fault_program,
    start_fault_program,
)
from torchair_ref.errors import CacheFileError
from torchair_ref.inference import artifact

pytestmark = pytest.mark.slow

JOB = {"model": "seed", "calls": [{"method": "prompt", "batch": 3}]}
COMMITTED = "after_rename"  # the one step after which the killed process's file is in place


def _state(root: Path) -> dict:
    """What a killed writer left: the compiled_module files, whether each decodes, and every entry."""
    files = {}
    for path in cache_files(root):
        try:
            artifact.read(str(path))
            files[str(path)] = "loads"
        except CacheFileError as exc:
            files[str(path)] = f"refused: {exc}"
    return {"files": files, "listing": listing(root)}


@pytest.fixture(scope="module")
def crashes(tmp_path_factory: pytest.TempPathFactory) -> dict:
    base = tmp_path_factory.mktemp("crash")
    roots = {step: base / step for step in STEPS}
    killed = {step: start_fault_program({**JOB, "cache_dirs": [str(root)], "kill_at": step}, base / f"cwd_{step}")
              for step, root in roots.items()}
    errors, left = {}, {}
    for step, proc in killed.items():
        try:
            finish(proc, killed=True)
        except AssertionError as exc:
            errors[step] = str(exc)
        left[step] = _state(roots[step])
    report = run_fault_program({**JOB, "cache_dirs": [str(r) for r in roots.values()], "passes": 2}, base / "cwd")
    runs = {step: [r for r in report["runs"] if r["cache_dir"] == str(root)] for step, root in roots.items()}
    return {"roots": roots, "errors": errors, "left": left, "runs": runs}


@pytest.mark.reliability(
    "Crash during save: SIGKILL before the temp file, after creating it, halfway through it, before and after the "
    "rename",
    "right after the kill `compiled_module` is absent (or whole, after the rename); the next process gets outputs "
    "equal to the plain method with no warning, rebuilding (or loading) the cache; then one valid 0600 file, no "
    "temp file left",
)
@pytest.mark.parametrize("step", STEPS)
def test_kill_during_save_never_leaves_a_partial_file(crashes: dict, step: str) -> None:
    """CC-11, CC-17: after a SIGKILL at `step` of the write, no partial file ever loads; the next run is right."""
    root = crashes["roots"][step]
    assert step not in crashes["errors"], crashes["errors"].get(step)
    left = crashes["left"][step]
    expected = {} if step != COMMITTED else {str(p): "loads" for p in cache_files(root)}
    if step == COMMITTED:
        assert len(left["files"]) == 1 and set(left["files"].values()) == {"loads"}, left
    assert left["files"] == expected, f"after a kill at {step}: {left}"

    first, second = crashes["runs"][step]
    reference = crashes["runs"][STEPS[0]][0]["outputs"]
    assert first["max_diff"] <= 1e-6 and first["outputs"] == second["outputs"] == reference, (step, first, second)
    traced = 0 if step == COMMITTED else 1
    assert first["unique_graphs"] == traced, f"after a kill at {step} the next process traced {first['unique_graphs']}"
    assert not first["warnings"], f"after a kill at {step}: {first['warnings']}"
    assert second["unique_graphs"] == 0 and any("loaded from" in line for line in second["logs"]), second
    assert_one_valid_cache(root)
