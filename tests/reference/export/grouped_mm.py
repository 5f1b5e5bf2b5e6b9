"""transformers' custom op ``transformers::grouped_mm_fallback`` for the lowering cases: the library's own where
transformers is installed (the zoo environment), else a stand-in with its schema and its semantics, registered under
its name, so that the reference's lowering (keyed by that name) is tested without the library. The stand-in is only
registered where transformers cannot be imported, so the library's own registration never meets it."""

from __future__ import annotations

import importlib.util
from typing import Any

import torch

NAME = "transformers::grouped_mm_fallback"
SCHEMA = "(Tensor input, Tensor weight, Tensor offs) -> Tensor"


def _grouped_mm(input: torch.Tensor, weight: torch.Tensor, offs: torch.Tensor) -> torch.Tensor:
    """Rows ``offs[e-1]:offs[e]`` of ``input`` times ``weight[e]``; rows past ``offs[-1]`` zero (transformers'
    ``_grouped_mm_fallback``, integrations/moe.py)."""
    output = torch.zeros(input.shape[0], weight.shape[2], dtype=input.dtype)
    start = 0
    for group, end in enumerate(offs.tolist()):
        output[start:end] = input[start:end] @ weight[group]
        start = end
    return output


def _shape_only(input: torch.Tensor, weight: torch.Tensor, offs: torch.Tensor) -> torch.Tensor:
    return input.new_empty(input.shape[0], weight.shape[2])


def grouped_mm() -> Any:
    """``torch.ops.transformers.grouped_mm_fallback.default``, registering the stand-in first where needed."""
    if importlib.util.find_spec("transformers") is not None:
        from torchair_conformance.zoo import packages

        packages.load()
        importlib.import_module("transformers.integrations.moe")
    elif not hasattr(torch.ops.transformers, "grouped_mm_fallback"):
        torch.library.custom_op(NAME, _grouped_mm, mutates_args=(), schema=SCHEMA)
        torch.library.register_fake(NAME, _shape_only)
    return torch.ops.transformers.grouped_mm_fallback.default
