"""Build a zoo model and its inputs from its catalog entry: seeded random weights, eval mode, nothing downloaded."""
from __future__ import annotations

import torch
from torch import nn

from torchair_conformance.zoo import catalog, packages

__all__ = ["build_model", "tokens", "images", "inputs", "FIRST_TOKEN"]

#: token ids are drawn from [FIRST_TOKEN, VOCAB): below it lie the pad, bos and eos ids of the configs
FIRST_TOKEN = 3


def build_model(name: str, seed: int = 0) -> nn.Module:
    """The library's model for entry `name`, its weights drawn after `torch.manual_seed(seed)`, in eval mode, on
    the CPU (the caller moves it)."""
    entry = catalog.entry(name)
    transformers, timm = packages.load()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        if entry.library == "transformers":
            config = getattr(transformers, entry.config_class)(**entry.config)
            model = getattr(transformers, entry.model_class)(config)
        else:
            model = timm.create_model(entry.model_class, pretrained=False, **entry.config)
    return model.eval()


def tokens(batch: int, length: int, seed: int) -> torch.Tensor:
    """Token ids, (batch, length) int64, drawn from `seed`."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(FIRST_TOKEN, catalog.VOCAB, (batch, length), generator=gen)


def images(batch: int, pixels: int, seed: int) -> torch.Tensor:
    """Images, (batch, 3, pixels, pixels) float32, drawn from `seed`."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(batch, 3, pixels, pixels, generator=gen)


def inputs(name: str, shape: tuple[int, int], seed: int) -> tuple[tuple, dict]:
    """The plain pattern's call arguments for entry `name` at `shape` ((batch, sequence) or (batch, pixels)):
    `(args, kwargs)`; language models also get an all-ones `attention_mask`, as a tokenizer returns one."""
    entry = catalog.entry(name)
    if entry.library == "timm":
        return (images(*shape, seed),), {}
    ids = tokens(*shape, seed)
    return (ids,), ({"attention_mask": torch.ones_like(ids)} if entry.attention_mask else {})
