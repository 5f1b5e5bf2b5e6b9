"""Real multi-rank exports: gloo process groups on 127.0.0.1, one spawned process per rank (EX-4, EX-5)."""

from __future__ import annotations

import datetime
import os
import socket
import time
import traceback

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn

INIT_TIMEOUT_S = 60
RUN_TIMEOUT_S = 300


class AllReduceModel(nn.Module):
    """A linear layer whose output is summed over the default process group."""

    def __init__(self, rank: int) -> None:
        super().__init__()
        torch.manual_seed(1000 + rank)  # each rank has its own weights, so rank directories can be told apart
        self.proj = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.proj(x)
        dist.all_reduce(y)
        return y + 1


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank_main(rank: int, world_size: int, port: int, root: str) -> None:
    # Spawned: imports stay inside so that the parent's import state does not matter.
    from tests.export import checks
    from torchair_ref.export import dynamo_export, externalize_threshold

    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group(
        "gloo",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=world_size,
        timeout=datetime.timedelta(seconds=INIT_TIMEOUT_S),
    )
    try:
        model, x = AllReduceModel(rank), torch.randn(2, 4)
        plain = os.path.join(root, "plain")
        dynamo_export(x, model=model, export_path=plain, export_name="net", config=checks.config())
        with externalize_threshold(0):
            dynamo_export(x, model=model, export_path=os.path.join(root, "atc"), export_name="net",
                          config=checks.config(atc=True))  # fmt: skip
        dist.barrier()
    except BaseException:
        with open(os.path.join(root, f"error{rank}.txt"), "w") as f:
            f.write(traceback.format_exc())
        raise
    finally:
        dist.destroy_process_group()


def run_ranks(world_size: int, root: str) -> None:
    """Export AllReduceModel on ``world_size`` ranks into ``root``/plain and ``root``/atc; bounded in time."""
    context = mp.start_processes(
        _rank_main, args=(world_size, free_port(), root), nprocs=world_size, join=False, start_method="spawn"
    )
    deadline = time.monotonic() + RUN_TIMEOUT_S
    try:
        while not context.join(timeout=5):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{world_size} export ranks still running after {RUN_TIMEOUT_S}s")
    finally:
        for process in context.processes:
            if process.is_alive():
                process.terminate()
                process.join(10)
