"""CC-11, CC-17: no room or no rights. The call still returns the right outputs, warns that nothing was cached, and
leaves no partial file.

"Read-only" is the immutable attribute (chattr +i), because root, which runs these tests in CI, ignores permission
bits; without CAP_LINUX_IMMUTABLE or on a file system without the attribute the cases skip, and other users get the
write bits removed instead (tests.reliability.faults.immutable). "No room" is RLIMIT_FSIZE, set in a fresh process just
before
the first call: the write fails with EFBIG, as it would with ENOSPC on a full disk, which cannot be made here
without mounting a small file system.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.reliability.faults import (
    Net,
    X,
    cache_files,
    eager_config,
    immutable,
    listing,
    run_fault_program,
    snapshot,
    temp_files,
)
from torchair_ref.inference import cache_compile

NOT_CACHED = "could not be cached"


def first_call(root: Path) -> tuple[torch.Tensor, list[str]]:
    cached = cache_compile(Net().forward, config=eager_config(), cache_dir=str(root))
    with pytest.warns(UserWarning) as caught:
        out = cached(X)
    return out, [str(w.message) for w in caught]


@pytest.mark.reliability(
    "No rights: read-only cache root (chattr +i), read-only parent of a missing root, read-only `<func>` folder "
    "holding a broken cache",
    "outputs = plain method; a `could not be cached` warning; nothing created, the broken file left as it was",
)
@pytest.mark.parametrize("where", ["root", "parent of a missing root", "<func> folder with a broken cache"])
def test_read_only_cache_location(tmp_path: Path, where: str) -> None:
    """CC-11, CC-17: when the cache cannot be written the call still succeeds, warns, and writes nothing."""
    root = tmp_path / "parent" / "cache"
    frozen = root.parent
    if where == "root":
        root.mkdir(parents=True)
        frozen = root
    elif where == "<func> folder with a broken cache":
        cache_compile(Net().forward, config=eager_config(), cache_dir=str(root))(X)
        (path,) = cache_files(root)
        path.write_bytes(path.read_bytes()[:-1])
        frozen = path.parent
    else:
        frozen.mkdir()
    before = snapshot(tmp_path)
    with immutable(frozen):
        out, warned = first_call(root)
        after = snapshot(tmp_path)
    torch.testing.assert_close(out, Net().forward(X).detach(), rtol=0, atol=1e-6)
    assert any(NOT_CACHED in w for w in warned), f"{where}: no '{NOT_CACHED}' warning in {warned}"
    assert after == before, f"{where}: files changed under a read-only location: {listing(tmp_path)}"


@pytest.mark.slow
@pytest.mark.reliability(
    "No room: RLIMIT_FSIZE below the artifact's size, hit while writing it (fresh process)",
    "outputs = plain method; a `could not be cached: ... File too large` warning; no `compiled_module`, no temp file",
)
def test_file_size_limit_during_the_write(tmp_path: Path) -> None:
    """CC-11: a write cut short by the file size limit leaves no file and no temp file; the call still succeeds."""
    root = tmp_path / "cache"
    report = run_fault_program({"model": "seed", "cache_dirs": [str(root)], "fsize": 1024}, tmp_path)
    (run,) = report["runs"]
    assert run["max_diff"] <= 1e-6 and run["unique_graphs"] == 1, run
    assert any(NOT_CACHED in w and "File too large" in w for w in run["warnings"]), run["warnings"]
    assert not cache_files(root) and not temp_files(root), listing(root)
