"""A model with a collective, for the reference's export tests (EX-4)."""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch import nn


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
