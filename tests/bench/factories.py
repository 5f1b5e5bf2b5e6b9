"""`--model package.module:factory` examples for the bench tests: one that keeps the contract of
`torchair_conformance.bench.models.from_factory`, and one of each way to break it."""
from __future__ import annotations

import torch
from torch import nn


class Mlp(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4))

    def forward(self, x: torch.Tensor, *, scale: float = 1.0) -> torch.Tensor:
        return self.net(x) * scale


def mlp() -> tuple:
    """The contract: seeded weights (the benchmark seeds torch first), a method name, positional and keyword inputs."""
    return Mlp(), "forward", (torch.randn(8, 16),), {"scale": 2.0}


def two_items() -> tuple:
    return Mlp(), "forward"


def not_a_module() -> tuple:
    return lambda x: x, "forward", (torch.randn(8, 16),)


def no_such_method() -> tuple:
    return Mlp(), "decode", (torch.randn(8, 16),)


def wrong_inputs() -> tuple:
    return Mlp(), "forward", (torch.randn(8, 3),)


def raises() -> tuple:
    raise RuntimeError("the checkpoint is missing")


NOT_CALLABLE = 3
