"""CC-11, CC-14: readers that start while a writer is writing the same cache.

The writer (tests/programs/fault_run.py) pauses twice while writing its ``compiled_module``: halfway through its
temporary file, then just after the rename (before the folder's fsync). At each pause two readers run to completion;
then the writer goes on. (Eight processes cold-compiling one path at once is a conformance test:
torchair_conformance/test_reliability.py.)
"""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.reliability.faults import assert_one_valid_cache, finish, start_fault_program

pytestmark = pytest.mark.slow

JOB = {"model": "seed", "calls": [{"method": "prompt", "batch": 4}]}
READERS = 2
#: pause -> graphs each reader traces: halfway through the writer's temp file there is nothing to load yet, so the
#: first reader compiles (and saves); its twin compiles too or loads that whole file. After the rename: both load.
PAUSES = {"mid_write": {(1, 1), (0, 1)}, "after_rename": {(0, 0)}}


def wait_for(path: Path, writer, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert writer.poll() is None, f"the writer exited ({writer.returncode}) before pausing at {path.stem}"
        assert time.monotonic() < deadline, f"the writer did not pause at {path.stem} within {timeout} s"
        time.sleep(0.05)


@pytest.mark.reliability(
    "Race: 2 readers start while a writer is paused halfway through its temp file, 2 more just after its rename",
    "everyone's outputs are equal and = plain method, no warning; readers compile (nothing to load yet) or load the "
    "writer's file; the writer's rename succeeds; one valid 0600 file, no temp file",
)
def test_readers_while_a_writer_writes(tmp_path: Path, record_property: Callable) -> None:
    """CC-11, CC-14: a reader never sees a partial file: it finds none (and compiles) or a whole one (and loads)."""
    root, signals = tmp_path / "cache", tmp_path / "signals"
    signals.mkdir()
    writer = start_fault_program(
        {**JOB, "cache_dirs": [str(root)], "pause_at": list(PAUSES), "signals": str(signals)}, tmp_path / "w")
    readers = {}
    try:
        for step in PAUSES:
            wait_for(signals / f"{step}.paused", writer)
            started = [start_fault_program({**JOB, "cache_dirs": [str(root)]}, tmp_path / f"{step}{i}")
                       for i in range(READERS)]
            readers[step] = [finish(reader)["runs"][0] for reader in started]
            (signals / f"{step}.go").touch()
    finally:
        for step in PAUSES:
            (signals / f"{step}.go").touch()
    (written,) = finish(writer)["runs"]
    runs = [written, *(run for step_runs in readers.values() for run in step_runs)]
    record_property("cases", len(runs) - 1)
    for run in runs:
        assert run["max_diff"] <= 1e-6 and not run["warnings"], run
    assert len({str(run["outputs"]) for run in runs}) == 1, [run["outputs"] for run in runs]
    traced = {step: tuple(sorted(run["unique_graphs"] for run in step_runs)) for step, step_runs in readers.items()}
    assert all(traced[step] in allowed for step, allowed in PAUSES.items()), (traced, PAUSES)
    assert any("saved to" in line for line in written["logs"]), written["logs"]
    assert_one_valid_cache(root)
