"""The export zoo (EX-3..EX-11): modules with several inputs, float and int buffers, a shared weight and an optional
all_reduce, built deterministically from JSON-able descriptions (drawn by ``strategies.export_specs``), their example
inputs and their weights.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn

from torchair_conformance.models import DTYPES, _layers, _named_class, device

__all__ = ["INT_BUFFER_DTYPES", "ExportNet", "build_export_model", "export_inputs", "model_weights"]

# --- Models for dynamo_export (SPEC section 4) ---------------------------------------------------------------------
#
# An export description is ``{"kind": "export", "class_name": str, "seed": int, "dtype": float dtype name,
# "inputs": [{"features": int, "keyword": bool}, ...], "hidden": int, "structure": stack structure (in_features =
# hidden), "float_buffer": bool, "int_buffer": None | int dtype name, "shared": bool, "all_reduce": bool,
# "outputs": 1 | 2}``: each input is projected to ``hidden`` and the projections summed, then scaled by a float
# buffer, permuted (int64/int32 buffer) or offset (int8/uint8 buffer), run through the stack, then through two
# linear layers that share one weight, summed over the default process group, and returned (with the projections'
# sum as a second output when ``outputs`` is 2). Every parameter and buffer is used by the graph.

INT_BUFFER_DTYPES = ("int64", "int32", "int8", "uint8")


class ExportNet(nn.Module):
    """Several inputs (positional and keyword), float and int buffers, a shared weight, optional all_reduce."""

    def __init__(self, spec: Mapping[str, Any]) -> None:
        super().__init__()
        hidden = spec["hidden"]
        # Where each input comes from: the next positional argument, or the keyword k<i>.
        self.sources = [f"k{i}" if s["keyword"] else None for i, s in enumerate(spec["inputs"])]
        self.proj = nn.ModuleList(nn.Linear(s["features"], hidden) for s in spec["inputs"])
        if spec["float_buffer"]:
            self.register_buffer("scale", torch.rand(hidden) + 0.5)
        self.int_kind = spec["int_buffer"]
        if self.int_kind in ("int64", "int32"):
            self.register_buffer("perm", torch.randperm(hidden).to(DTYPES[self.int_kind]))
        elif self.int_kind in ("int8", "uint8"):
            low = -8 if self.int_kind == "int8" else 0
            self.register_buffer("codes", torch.randint(low, 8, (hidden,)).to(DTYPES[self.int_kind]))
        self.layers, width = _layers(spec["structure"]["layers"], hidden)
        self.shared = spec["shared"]
        if self.shared:
            self.mix = nn.Linear(width, width)
            self.unmix = nn.Linear(width, width)
            self.unmix.weight = self.mix.weight  # one tensor, two names: mix.weight and unmix.weight
        self.all_reduce = spec["all_reduce"]
        self.two_outputs = spec["outputs"] == 2

    def forward(self, *args: torch.Tensor, **kwargs: torch.Tensor) -> Any:
        xs, k = [], 0
        for name in self.sources:
            if name is None:
                xs.append(args[k])
                k += 1
            else:
                xs.append(kwargs[name])
        y = self.proj[0](xs[0])
        for proj, x in zip(self.proj[1:], xs[1:]):
            y = y + proj(x)
        first = y
        if hasattr(self, "scale"):
            y = y * self.scale
        if self.int_kind in ("int64", "int32"):
            y = y.index_select(-1, self.perm)
        elif self.int_kind is not None:
            y = y + self.codes.to(y.dtype)
        for layer in self.layers:
            y = layer(y)
        if self.shared:
            y = self.unmix(torch.relu(self.mix(y)))
        if self.all_reduce:
            torch.distributed.all_reduce(y)
        return (y, first) if self.two_outputs else y


def build_export_model(spec: Mapping[str, Any]) -> nn.Module:
    """The module an export description names, parameters drawn from its seed, in eval mode."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(spec["seed"])
        module = _named_class(ExportNet, spec["class_name"])(spec)
    # Module.to(dtype) converts the floating-point parameters and buffers only: int buffers keep their dtype.
    return module.to(dtype=DTYPES[spec["dtype"]], device=device()).eval()


def export_inputs(spec: Mapping[str, Any], batch: Sequence[int], seed: int) -> tuple[tuple, dict]:
    """Example inputs for ``build_export_model(spec)``: ``(args, kwargs)``, every tensor of shape batch + [features]."""
    gen = torch.Generator().manual_seed(seed)
    args, kwargs = [], {}
    for i, s in enumerate(spec["inputs"]):
        t = torch.randn(list(batch) + [s["features"]], generator=gen).to(dtype=DTYPES[spec["dtype"]], device=device())
        if s["keyword"]:
            kwargs[f"k{i}"] = t
        else:
            args.append(t)
    return tuple(args), kwargs


def model_weights(module: nn.Module) -> dict[str, list[Any]]:
    """EX-6: the module's weights: each distinct parameter or buffer tensor once, with every fqn it has (in
    registration order), as ``{first fqn: [tensor, fqn, fqn, ...]}``."""
    by_tensor: dict[int, list[Any]] = {}
    named = [*module.named_parameters(remove_duplicate=False), *module.named_buffers(remove_duplicate=False)]
    for fqn, t in named:
        by_tensor.setdefault(id(t), [t]).append(fqn)
    return {entry[1]: entry for entry in by_tensor.values()}
