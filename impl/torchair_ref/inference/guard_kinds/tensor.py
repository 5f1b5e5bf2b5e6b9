"""TENSOR_MATCH on a tensor that is not an input of the compiled graph (SPEC CC-21): dtype, device type, rank,
static sizes and strides. A tensor that is an input of the graph needs no check of its own: the graph's input check
(`inputs`) covers dtype, device, sizes and strides on every call; `requires_grad` and autograd dispatch keys do not
matter to an inference graph."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import torch

from torchair_ref.inference.guard_kinds import register
from torchair_ref.inference.guard_kinds.base import Code, GuardSpec, RawGuard
from torchair_ref.inference.guard_values import UnknownGuard

_SIZE_STRIDE = re.compile(r"size=\[([^\]]*)\], stride=\[([^\]]*)\]")


@register
@dataclass(frozen=True)
class Tensor(GuardSpec):
    """The object at `source` is a tensor of `dtype` on a `device` of that type, with the static sizes of `size`
    and the strides of `stride` (None: symbolic) in every dim longer than 1."""

    check = "tensor"
    kinds = ("TENSOR_MATCH",)
    reads_value = True

    source: str
    dtype: str
    device: str
    size: list[int | None]
    stride: list[int | None]

    @classmethod
    def translate(cls, raw: RawGuard) -> list[GuardSpec]:
        source = raw.checked_source()
        at = raw.when([source])
        if at == "call" and source in raw.graph_inputs:
            return []
        if not isinstance(raw.value, torch.Tensor):
            raise UnknownGuard(f"{raw.kind} on {source}, which is not a tensor")
        found = _SIZE_STRIDE.search(raw.text)
        if found is None:
            raise UnknownGuard(f"{raw.kind}: no sizes and strides in {raw.text!r}")
        size, stride = ([None if d.strip() == "None" else int(d) for d in group.split(",") if d.strip()]
                        for group in found.groups())
        return [cls(raw.kind, at, raw.text, source, str(raw.value.dtype), raw.value.device.type, size, stride)]

    def test(self, code: Code) -> str:
        return f"{code.bind(self.fits)}({code.read(self.source)})"

    def fits(self, value: Any) -> bool:
        if not isinstance(value, torch.Tensor) or str(value.dtype) != self.dtype:
            return False
        if value.device.type != self.device or value.dim() != len(self.size):
            return False
        for dim, (size, stride) in enumerate(zip(self.size, self.stride)):
            if size is not None and value.size(dim) != size:
                return False
            if stride is not None and value.size(dim) > 1 and value.stride(dim) != stride:
                return False
        return True
