"""Two (or more) real gloo ranks on loopback, each calling a cache_compile'd method; prints one JSON line per rank.

Usage: python dist_run.py WORLD PORT CACHE_DIR '<options JSON>' (options: global_rank, tp_rank, pp_rank).
"""
from __future__ import annotations

import json
import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import torchair_ref


class Ranked(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x) * 2


def worker(rank: int, world: int, port: int, cache_dir: str, options: dict) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=60))
    try:
        config = torchair_ref.CompilerConfig()
        config.debug.run_eagerly = True
        cached = torchair_ref.inference.cache_compile(Ranked().forward, config=config, cache_dir=cache_dir, **options)
        cached(torch.randn(2, 4))
        print("RANK " + json.dumps({"rank": rank, "path": cached.cache_file}), flush=True)
        dist.barrier()
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    world, port, cache_dir, options = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])
    mp.spawn(worker, args=(world, port, cache_dir, options), nprocs=world, join=True)
