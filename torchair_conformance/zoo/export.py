"""The real-model zoo for `dynamo_export` (SPEC EX-1..EX-11): each model's plain call as a module whose `forward`
returns its main output tensor (a language model's logits or last hidden state, a vision model's class scores), and
its example inputs at any shape.

`dynamo_export(*args, model=build(name), dynamic=..., **kwargs)` with `(args, kwargs) = inputs(name)` exports the
model as a user would: token ids positionally, the tokenizer's all-ones `attention_mask` by keyword (language
models), images positionally (vision models); decoders run without a KV cache (`use_cache=False`), one full forward.
Used by the reference's zoo export tests (`tests/zoo/test_zoo_export.py`) and the suite's
(`torchair_conformance/test_export_zoo.py`).
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn

from torchair_conformance.zoo import catalog, families

__all__ = ["Exported", "build", "inputs", "DYNAMIC"]

#: the language model the zoo exports with `dynamic=True` too (issue 31: "one LLM with dynamic=True")
DYNAMIC = "llama"


class Exported(nn.Module):
    """A zoo model's plain call, returning its first output (`ModelOutput[0]` or the tensor itself)."""

    def __init__(self, model: nn.Module, decoder: bool) -> None:
        super().__init__()
        self.model = model
        self.decoder = decoder

    def forward(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        out = self.model(*args, **kwargs, use_cache=False) if self.decoder else self.model(*args, **kwargs)
        return out if isinstance(out, torch.Tensor) else out[0]


def build(name: str, seed: int = 0) -> Exported:
    """Entry `name`'s model (seeded random weights, eval mode) wrapped for export."""
    entry = catalog.entry(name)
    return Exported(families.build_model(name, seed), entry.kind.startswith("decoder")).eval()


def inputs(name: str, shape: tuple[int, int] | None = None, seed: int = 0) -> tuple[tuple, dict]:
    """`(args, kwargs)` for entry `name` at `shape` ((batch, sequence) or (batch, pixels); default its cold shape)."""
    return families.inputs(name, shape or catalog.entry(name).cold_shape, seed)
