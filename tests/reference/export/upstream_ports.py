"""Ports of the models of upstream TorchAir's own export system tests (``tests/st/torchair_export_st.py`` in
Ascend/torchair; the reference's tests: ``tests/reference/test_export_upstream_ports.py`` and, for the collectives,
``tests/reference/test_export_collectives.py``):

- ``Bf16``: ``test_export_bf16`` (lines 284-311): bfloat16 inputs and parameter, ``torch.ones`` of float16;
- ``SymPack``: ``test_export_with_sym_pack`` (356-383): Python ints as symbolic sizes, ``view`` by them, ``sum()``,
  ``stack``, exported with ``dynamic=True``;
- ``DistReduceScatterTensor`` and ``FuncolReduceScatterTensor``: ``test_export_with_allreduce``'s
  ``reduce_scatter_tensor`` models (659-677), in-place on an output argument and functional;
- ``Block``: a plain transformer block as a user writes it, attention by ``att.softmax(-1)`` (the issue's example),
  beside upstream's ones.

Each ``example_*`` gives the inputs upstream's test passes (or, for the block, small ones), and ``other_*`` inputs of
other sizes for the dynamic exports.
"""

from __future__ import annotations

import math

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
from torch import nn


class Bf16(nn.Module):
    """test_export_bf16's model."""

    def __init__(self) -> None:
        super().__init__()
        self.p1 = nn.Parameter(torch.randn([10], dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = x + y + torch.ones([2, 4], dtype=torch.float16)
        w = self.p1 * 2
        return x, w


def example_bf16() -> tuple:
    return torch.randn([2, 4], dtype=torch.bfloat16), torch.randn([2, 4], dtype=torch.bfloat16)


class SymPack(nn.Module):
    """test_export_with_sym_pack's model: ``x`` and ``y`` are Python ints, symbolic under ``dynamic=True``."""

    def forward(self, x: int, y: int, z: torch.Tensor, p: torch.Tensor, m: torch.Tensor,
                n: torch.Tensor) -> torch.Tensor:
        b = p.view([x]) + z.view([x]) + z.view([x])
        c = m.view([x, x]).sum()
        a = torch.stack([n, n, n, n])
        d = (m.view([4, y, y]) + a).sum()
        return b + c - d


def example_sym_pack(y: int = 3) -> tuple:
    """Upstream's inputs for y = 3 (x = 2y = 6); another y gives the same structure at other sizes."""
    x = 2 * y
    return x, y, torch.randn([y, 2]), torch.randn([2, y]), torch.randn([x * x]), torch.randn([y, y])


class Block(nn.Module):
    """A pre-norm transformer block: causal self-attention written out (``q @ k^T / sqrt(d)``, ``masked_fill`` of
    a ``tril`` mask, ``att.softmax(-1)``, ``@ v``) and a GELU MLP."""

    def __init__(self, width: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, width = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(width, dim=-1)
        q, k, v = (t.view(batch, length, self.heads, width // self.heads).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(width // self.heads)
        mask = torch.tril(torch.ones(length, length, dtype=torch.bool))
        att = att.masked_fill(~mask, float("-inf"))
        att = att.softmax(-1)
        y = (att @ v).transpose(1, 2).contiguous().view(batch, length, width)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x))


def example_block(batch: int = 2, length: int = 8) -> tuple:
    return (torch.randn(batch, length, 32),)


class DistReduceScatterTensor(nn.Module):
    """test_export_with_allreduce's ``DistReduceScatterTensor``: ``dist.reduce_scatter_tensor`` into the ``output``
    argument (in place), returning ``x``; the export is of the graph Dynamo makes of it."""

    def forward(self, x: torch.Tensor, output: torch.Tensor) -> torch.Tensor:
        dist.reduce_scatter_tensor(output, x, group=dist.group.WORLD)
        return x


class FuncolReduceScatterTensor(nn.Module):
    """test_export_with_allreduce's ``FuncolReduceScatterTensor``: functional ``reduce_scatter_tensor``, summed,
    scattered along the last dim."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return funcol.reduce_scatter_tensor(x, "sum", scatter_dim=-1, group=dist.group.WORLD)
