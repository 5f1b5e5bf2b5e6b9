"""The <dist> level of the cache path with a real torch.distributed world (CC-8), gloo on loopback."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PROGRAMS

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_ranks(world: int, cache_dir: Path, options: dict) -> dict[int, str]:
    done = subprocess.run(
        [sys.executable, str(PROGRAMS / "dist_run.py"), str(world), str(free_port()), str(cache_dir),
         json.dumps(options)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    records = [json.loads(line[5:]) for line in done.stdout.splitlines() if line.startswith("RANK ")]
    return {r["rank"]: r["path"] for r in records}


@pytest.mark.parametrize(
    ("options", "levels"),
    [
        ({}, ["world2global_rank0", "world2global_rank1"]),
        ({"global_rank": 7, "tp_rank": 1}, ["world2global_rank7_tp_rank1"] * 2),
        ({"pp_rank": 3}, ["world2global_rank0_pp_rank3", "world2global_rank1_pp_rank3"]),
    ],
    ids=["process-rank", "given-global-rank", "pp-rank"],
)
def test_world_level_names_the_rank(tmp_path: Path, options: dict, levels: list[str]) -> None:
    """CC-8: world{W}global_rank{R}, then tp_rank/pp_rank, between <model_info> and <func>."""
    paths = run_ranks(2, tmp_path, options)
    assert sorted(paths) == [0, 1], paths
    for rank, level in enumerate(levels):
        parts = Path(paths[rank]).relative_to(tmp_path).parts
        assert parts[1:] == (level, "forward", "compiled_module"), (rank, parts)
