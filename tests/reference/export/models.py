"""Small models for export tests: each is traced in well under a second."""

from __future__ import annotations

import torch
from torch import nn


class MLP(nn.Module):
    """Linear layers with ReLU between them; optionally the last layer reuses the first one's weight."""

    def __init__(self, widths: list[int], dtype: torch.dtype = torch.float32, tie: bool = False) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b, dtype=dtype) for a, b in zip(widths, widths[1:]))
        if tie:
            first, last = self.layers[0], self.layers[-1]
            assert first.weight.shape == last.weight.T.shape, "tie needs widths[0:2] == widths[-1:-3:-1]"
            self.tied = nn.Parameter(first.weight.detach().clone())
            first.weight = self.tied  # now the same tensor under "tied" and "layers.0.weight"
        self.tie = tie

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, layer in enumerate(self.layers):
            if self.tie and i == len(self.layers) - 1:
                x = x @ self.tied + layer.bias  # the tied weight, used a second time
            else:
                x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return x


class TwoLayer(nn.Module):
    """fc1 -> relu -> fc2, plus a float buffer: the workhorse of the layout tests."""

    def __init__(self, dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 8, dtype=dtype)
        self.fc2 = nn.Linear(8, 3, dtype=dtype)
        self.register_buffer("scale", torch.linspace(0.5, 1.5, 3, dtype=dtype))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x))) * self.scale


class WithInt8Buffer(nn.Module):
    """A float parameter and an int8 buffer, both used."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(3, 5))
        self.register_buffer("codes", torch.randint(-128, 127, (5,), dtype=torch.int8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x @ self.weight) * self.codes.float()


class TwoInputs(nn.Module):
    """A positional and a keyword input, and a parameter between them."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor, y: torch.Tensor, *, mask: torch.Tensor) -> torch.Tensor:
        return self.proj(x) + y * mask


class Unexported(nn.Module):
    """Has a parameter its forward never uses."""

    def __init__(self) -> None:
        super().__init__()
        self.used = nn.Linear(4, 2)
        self.unused = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.used(x)
