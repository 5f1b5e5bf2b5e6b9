"""Ctrl-C (SIGINT) and SIGTERM in `python -m torchair_conformance bench`: what was measured is kept, the workers stop,
the
scratch folders go (issue 21). A real bench process, a real signal, a real worker running when it arrives."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def survivors(marker: str) -> list[int]:
    """Processes whose environment carries `marker` (this test's TMPDIR): the bench and anything it started."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finds leftover processes through /proc")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_keeps_the_measurements_stops_the_worker_and_cleans_up(tmp_path: Path, signum: int) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch), "PYTHONPATH": os.pathsep.join([str(ROOT / "impl"), str(ROOT)])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "torchair_conformance", "bench", "--model", "tiny", "--run-eagerly", "--rounds", "3",
         "--baselines", "eager", "--no-overhead", "--history", str(tmp_path / "history")],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    seen = []
    try:
        for line in proc.stderr:
            seen.append(line)
            if "round 1/3: impl-warm ..." in line:  # eager and the cold run are measured, the warm worker starts
                break
        time.sleep(1.0)
        assert proc.poll() is None and len(survivors(f"TMPDIR={scratch}")) > 1, "".join(seen)
        if signum == signal.SIGINT:
            os.killpg(proc.pid, signum)  # Ctrl-C in a terminal: the whole foreground process group
        else:
            os.kill(proc.pid, signum)  # a cancelled job: the bench process alone
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = "".join(seen) + err
    assert proc.returncode == 128 + signum, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    (kept,) = tmp_path.glob("bench-unsaved-*.json")
    records = json.loads(kept.read_text(encoding="utf-8"))
    assert {r["variant"] for r in records} >= {"eager", "impl-cold"}, records
    name = signal.Signals(signum).name
    assert f"kept: {len(records)} records measured before {name} stopped the run in {kept}" in err, err[-3000:]
    assert not (tmp_path / "history").exists(), "nothing half-measured goes to the history"
    left = [p.name for p in scratch.iterdir() if p.name.startswith(("torchair-bench-", "conformance-process-"))]
    assert not left, f"scratch folders left: {left}"
    deadline = time.monotonic() + 10
    while survivors(f"TMPDIR={scratch}") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not survivors(f"TMPDIR={scratch}"), "a worker outlived the bench"
