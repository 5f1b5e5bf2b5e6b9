"""CC-11, CC-14: readers that start while a writer is writing the same cache.

The writer (tests/programs/fault_run.py) pauses at a chosen step of writing its ``compiled_module``: halfway through
the temporary file, or just after the rename. Two readers run to completion meanwhile; then the writer finishes.
(Eight processes cold-compiling one path at once is a conformance test: conformance/test_reliability.py.)
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.faults import assert_one_valid_cache, finish, start_fault_program

pytestmark = pytest.mark.slow

JOB = {"model": "seed", "calls": [{"method": "prompt", "batch": 4}]}
READERS = 2


def wait_for(path: Path, writer, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert writer.poll() is None, f"the writer exited ({writer.returncode}) before pausing"
        assert time.monotonic() < deadline, f"the writer did not pause within {timeout} s"
        time.sleep(0.05)


@pytest.mark.reliability(
    "Race: 2 readers start while a writer is paused halfway through its temp file, or just after its rename",
    "everyone's outputs are equal and = plain method, no warning; readers compile (nothing to load yet) or load the "
    "writer's file; one valid 0600 file, no temp file",
)
@pytest.mark.parametrize("step", ["mid_write", "after_rename"])
def test_readers_while_a_writer_writes(tmp_path: Path, step: str) -> None:
    """CC-11, CC-14: a reader never sees a partial file: it finds none (and compiles) or a whole one (and loads)."""
    root = tmp_path / "cache"
    ready, go = tmp_path / "paused", tmp_path / "go"
    writer = start_fault_program(
        {**JOB, "cache_dirs": [str(root)], "pause_at": step, "ready": str(ready), "go": str(go)}, tmp_path / "w")
    try:
        wait_for(ready, writer)
        readers = [start_fault_program({**JOB, "cache_dirs": [str(root)]}, tmp_path / f"r{i}") for i in range(READERS)]
        runs = [finish(reader)["runs"][0] for reader in readers]
    finally:
        go.touch()
    runs.append(finish(writer)["runs"][0])
    for run in runs:
        assert run["max_diff"] <= 1e-6 and not run["warnings"], run
    assert len({str(run["outputs"]) for run in runs}) == 1, [run["outputs"] for run in runs]
    expected = 0 if step == "after_rename" else 1
    assert [run["unique_graphs"] for run in runs[:-1]] == [expected] * READERS, runs
    assert_one_valid_cache(root)
