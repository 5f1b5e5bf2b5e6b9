"""CC-14, CC-17: a kept kernel (`ge_cache=True`, Inductor) exchanged for an attacker's shared object while the warm
start loads it. The attacker's constructor writes a canary; it must never be written, and the call must still
return the cold run's outputs.

Two variants of the swap of issue 12: a racing swapper that keeps exchanging the kernel file for the hostile one by
rename (the file is always a whole 0600 file of ours; only its bytes change), and a deterministic one that needs no
race: a FIFO at the kernel's path, whose writer hands over the genuine bytes when the loader opens it and puts the
hostile file at the path right after. The loader reads, hashes and loads the bytes of one descriptor (a memfd), and
never waits on a FIFO, so neither variant can run foreign code.
"""
from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import pytest

from tests.reliability.faults import cache_files, hostile_shared_object
from torchair_ref.inference import artifact

pytestmark = [pytest.mark.slow, pytest.mark.inductor]

JOB = {"model": "mlp", "run_eagerly": False, "ge_cache": True, "calls": [{"method": "run", "batch": 3}]}


def _cold(tmp_path: Path, cache_program, env: dict[str, str]) -> tuple[dict, list[Path]]:
    report = cache_program(JOB, tmp_path, env=env)
    kernels = sorted((tmp_path / ".torchair_cache").rglob("kernels/*.so"))
    assert kernels, f"no kept kernels: {sorted(p.name for p in (tmp_path / '.torchair_cache').rglob('*'))}"
    return report, kernels


class Swapper(threading.Thread):
    """Exchanges each kernel file for the hostile shared object and back, by rename, until stopped."""

    def __init__(self, kernels: list[Path], hostile: bytes) -> None:
        super().__init__(daemon=True)
        self.versions = {kernel: (kernel.read_bytes(), hostile) for kernel in kernels}
        self.stop = threading.Event()
        self.swaps = 0

    def run(self) -> None:
        while not self.stop.is_set():
            for kernel, versions in self.versions.items():
                spare = kernel.with_name(kernel.name + ".swap")
                try:
                    spare.write_bytes(versions[self.swaps % 2])
                    spare.chmod(0o600)
                    os.replace(spare, kernel)
                except OSError:
                    continue  # the folder was removed (a discarded cache): keep trying until stopped
            self.swaps += 1
            self.stop.wait(0.002)  # leave the CPU to the warm start: the race is in the window, not the rate


@pytest.mark.reliability(
    "Hostile kernel swap, racing: a swapper exchanges each kept kernel (`ge_cache=True`, Inductor) for a shared "
    "object whose constructor writes a canary, back and forth by rename, during 2 warm starts",
    "the canary is never written; each warm start returns the cold run's outputs (the kernel is loaded from the "
    "bytes that were hashed, or the hostile bytes are refused by their SHA-256)",
)
def test_racing_kernel_swap_runs_no_foreign_code(tmp_path: Path, cache_program, record_property) -> None:
    """CC-14, CC-17: whatever the swapper does between the hash and the load, only the recorded bytes are loaded."""
    canary = tmp_path / "canary"
    hostile = hostile_shared_object(tmp_path, canary)
    env = {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor_cache")}
    cold, kernels = _cold(tmp_path, cache_program, env)
    swapper = Swapper(kernels, hostile.read_bytes())
    swapper.start()
    try:
        warm = [cache_program(JOB, tmp_path, env=env) for _ in range(2)]
    finally:
        swapper.stop.set()
        swapper.join(timeout=60)
    record_property("cases", 2)
    assert swapper.swaps > 10, f"the swapper made only {swapper.swaps} swaps: no race was tried"
    assert not canary.exists(), f"foreign code ran: a swapped kernel was loaded ({swapper.swaps} swaps)"
    for report in warm:
        assert report["outputs"] == cold["outputs"], (report["outputs"], cold["outputs"])


class FifoSwapper(threading.Thread):
    """At a FIFO in place of a kernel: when a reader opens it, write the genuine bytes, then put the hostile file at
    the path (the swap the reader cannot see coming when it hashes what it read and then loads the path)."""

    def __init__(self, kernel: Path, genuine: bytes, hostile: Path) -> None:
        super().__init__(daemon=True)
        self.kernel, self.genuine, self.hostile = kernel, genuine, hostile
        self.stop = threading.Event()
        self.fired = False

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                fd = os.open(self.kernel, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as exc:
                if exc.errno not in (errno.ENXIO, errno.ENOENT, errno.ENOTDIR):
                    raise
                self.stop.wait(0.001)  # no reader yet
                continue
            try:
                os.set_blocking(fd, True)
                view = memoryview(self.genuine)
                while view:
                    view = view[os.write(fd, view):]
            except OSError:
                pass  # the reader is gone already
            finally:
                os.close(fd)
            spare = self.kernel.with_name(self.kernel.name + ".swap")
            try:
                spare.write_bytes(self.hostile.read_bytes())
                spare.chmod(0o600)
                os.replace(spare, self.kernel)
            except OSError:
                pass  # the folder was removed
            self.fired = True
            return


@pytest.mark.reliability(
    "Hostile kernel swap, deterministic: a FIFO at a kept kernel's path whose writer hands over the genuine bytes "
    "when it is opened and puts the hostile shared object at the path right after",
    "no wait on the FIFO: it is damage (not a regular file), the cache is discarded with a warning and rebuilt; "
    "the canary is never written; outputs = the cold run's",
)
def test_fifo_kernel_swap_runs_no_foreign_code(tmp_path: Path, cache_program) -> None:
    """CC-17: a kernel that is not a regular file is never waited on nor loaded; the cache is rebuilt."""
    canary = tmp_path / "canary"
    hostile = hostile_shared_object(tmp_path, canary)
    env = {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor_cache")}
    cold, kernels = _cold(tmp_path, cache_program, env)
    genuine = kernels[0].read_bytes()
    kernels[0].unlink()
    os.mkfifo(kernels[0], 0o600)
    swapper = FifoSwapper(kernels[0], genuine, hostile)
    swapper.start()
    try:
        warm = cache_program(JOB, tmp_path, env=env, timeout=300)
    finally:
        swapper.stop.set()
        swapper.join(timeout=60)
    assert not canary.exists(), "foreign code ran: the hostile kernel put at the FIFO's path was loaded"
    assert warm["outputs"] == cold["outputs"], (warm["outputs"], cold["outputs"])
    assert any("Discarding broken cache" in w and "not a regular file" in w for w in warm["warnings"]), warm["warnings"]


@pytest.mark.reliability(
    "Damaged file: a resealed Inductor record missing its first kernel entry (a declaration the record does not "
    "know), `ge_cache=True`",
    "every other declaration still gets its own kernel (bound by the SHA-256 of its source, never by position); "
    "the missing one is rebuilt by Inductor; outputs = the cold run's",
)
def test_missing_kernel_entry_never_shifts_the_binding(tmp_path: Path, cache_program) -> None:
    """CC-14: kernel i is never bound to kernel j's shared object, whatever the record lists."""
    env = {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor_cache")}
    cold, kernels = _cold(tmp_path, cache_program, env)
    (path,) = cache_files(tmp_path / ".torchair_cache")
    payload = artifact.decode(path.read_bytes())
    assert len(payload["graph"]["kernels"]) >= 2, payload["graph"]["kernels"]
    payload["graph"]["kernels"].pop(0)
    path.write_bytes(artifact.encode(payload))
    warm = cache_program(JOB, tmp_path, env=env)
    assert warm["outputs"] == cold["outputs"], (warm["outputs"], cold["outputs"])
