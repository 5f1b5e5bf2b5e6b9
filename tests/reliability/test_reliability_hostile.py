"""CC-17, RC-1: caches crafted to run code when loaded. A canary file proves the code never ran.

The tampered payloads put canary-writing code into the eager graph's source, which a load would ``exec``. Each
canary is first shown to be live (the crafted code does write it when run), so its absence means something.
A file that is ours, mode 0600, whole and checksummed is trusted like a ``.pyc``: whoever can write it can already
run code as us. Everything short of that is refused below: a broken checksum, a loose mode, another owner, a path
through a symlink, a kept kernel whose SHA-256 differs from the record.
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from tests.reliability.faults import (
    Case,
    Net,
    X,
    assert_one_valid_cache,
    call_again,
    cold,
    hostile_shared_object,
    snapshot,
)
from torchair_ref.inference import artifact, readable_cache


def tamper(case: Case, canary: Path, *, sealed: bool) -> bytes:
    """The valid file with canary-writing code in its graph source; `sealed`: with a matching checksum."""
    payload = artifact.decode(case.valid)
    payload["graph"]["code"] = f"open({str(canary)!r}, 'w').close()\n" + payload["graph"]["code"]
    exec(compile(payload["graph"]["code"], "<tampered>", "exec"), {})  # the canary is live
    assert canary.exists(), "the tampered code does not write the canary"
    canary.unlink()
    data = artifact.encode(payload)
    if sealed:
        return data
    magic_and_header = case.valid[: case.valid.index(b"\n", len(artifact.MAGIC)) + 1]
    return magic_and_header + data[len(magic_and_header):]  # the old header, so the old checksum


def _unsealed(case: Case, canary: Path) -> None:
    case.path.write_bytes(tamper(case, canary, sealed=False))


def _sealed_mode(mode: int) -> Callable[[Case, Path], None]:
    def craft(case: Case, canary: Path) -> None:
        case.path.write_bytes(tamper(case, canary, sealed=True))
        case.path.chmod(mode)

    return craft


def _sealed_other_owner(case: Case, canary: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to give the cache file to another user")
    case.path.write_bytes(tamper(case, canary, sealed=True))
    os.chown(case.path, 4242, 4242)


def _sealed_through_symlink(case: Case, canary: Path) -> None:
    planted = case.outside / "compiled_module"
    planted.write_bytes(tamper(case, canary, sealed=True))
    planted.chmod(0o600)
    case.path.unlink()
    case.path.symlink_to(planted)


def _sealed_in_symlinked_folder(case: Case, canary: Path) -> None:
    folder = case.path.parent
    planted = case.outside / folder.name
    planted.mkdir()
    (planted / "compiled_module").write_bytes(tamper(case, canary, sealed=True))
    (planted / "compiled_module").chmod(0o600)
    shutil.rmtree(folder)
    folder.symlink_to(planted)


CRAFTED: dict[str, Callable[[Case, Path], None]] = {
    "code in the payload, checksum not updated": _unsealed,
    "code in the payload, resealed, mode 0644": _sealed_mode(0o644),
    "code in the payload, resealed, mode 0666": _sealed_mode(0o666),
    "code in the payload, resealed, another owner": _sealed_other_owner,
    "code in a resealed file outside the root, compiled_module a symlink to it": _sealed_through_symlink,
    "code in a resealed file in a folder outside the root, <func> a symlink to it": _sealed_in_symlinked_folder,
}


@pytest.mark.reliability(
    "Hostile file: tampered payload (checksum not updated; resealed but 0644/0666, another owner, or reached "
    "through a symlinked file or folder)",
    "lazy path: rebuilt with a warning; readable_cache: ValueError (not run for the symlinked folder: the caller "
    "names that path); the (live) canary never appears",
)
@pytest.mark.parametrize(("crafted", "api"), [
    *[(crafted, "lazy path") for crafted in CRAFTED],
    # readable_cache reads through a symlinked parent folder: the caller names that path (RC-1 refuses a symlinked
    # file, which is the case above it)
    *[(crafted, "readable_cache") for crafted in CRAFTED if not crafted.endswith("<func> a symlink to it")],
])
def test_tampered_payload_never_runs(tmp_path: Path, crafted: str, api: str) -> None:
    """CC-17, RC-1: a payload carrying code runs only from a whole, private file of ours; every other one is refused."""
    case = cold(tmp_path)
    canary = tmp_path / "canary"
    CRAFTED[crafted](case, canary)
    if api == "lazy path":
        out, warned, traced, _ = call_again(case)
        torch.testing.assert_close(out, Net().forward(X).detach(), rtol=0, atol=1e-6)
        assert traced == 1 and any("Discarding" in w for w in warned), (traced, warned)
        assert_one_valid_cache(case.root)
    else:
        before = snapshot(tmp_path)
        with pytest.raises(ValueError):
            readable_cache(str(case.path), print_output=False, file=str(tmp_path / "out.py"))
        assert snapshot(tmp_path) == before, "readable_cache changed files"
    assert not canary.exists(), f"{crafted}: the crafted code ran ({api})"


@pytest.mark.slow
@pytest.mark.inductor
@pytest.mark.reliability(
    "Hostile file: a kept kernel (`ge_cache=True`, Inductor) replaced by a shared object whose constructor writes a "
    "canary",
    "warm start without tracing, outputs = the cold run's; the replaced kernel is never loaded (its SHA-256 differs "
    "from the record); the (live) canary never appears",
)
def test_replaced_kernel_is_never_loaded(tmp_path: Path, cache_program) -> None:
    """CC-14, CC-17: a kept kernel whose bytes differ from the record is never dlopen'ed; the warm start stays right."""
    canary = tmp_path / "canary"
    hostile = hostile_shared_object(tmp_path, canary)
    env = {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor_cache")}
    job = {"model": "mlp", "run_eagerly": False, "ge_cache": True, "calls": [{"method": "run", "batch": 3}]}
    cold_run = cache_program(job, tmp_path, env=env)
    kernels = sorted((tmp_path / ".torchair_cache").rglob("kernels/*.so"))
    assert kernels, f"no kept kernels: {sorted(p.name for p in (tmp_path / '.torchair_cache').rglob('*'))}"
    for kernel in kernels:
        kernel.write_bytes(hostile.read_bytes())  # still a 0600 file of ours: only its bytes differ from the record
    warm = cache_program(job, tmp_path, env=env)
    assert not canary.exists(), "a replaced kernel was loaded: its constructor ran"
    assert warm["unique_graphs"] == 0, warm
    assert warm["outputs"] == cold_run["outputs"], (warm["outputs"], cold_run["outputs"])
