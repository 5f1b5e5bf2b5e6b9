"""TENSOR_MATCH on a tensor that is not an input of the compiled graph (SPEC CC-21): dtype, device (with its index,
as Dynamo's `TensorCheck` compares it), rank, static sizes and strides, checked by the same `TensorSpec` as the
graph's inputs. A tensor that is an input of the graph needs no check of its own: the graph's input check
(`inputs`) covers dtype, device, sizes and strides on every call; `requires_grad` and autograd dispatch keys do not
matter to an inference graph."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import torch

from torchair_ref.errors import BrokenCacheError
from torchair_ref.inference import guard_bindings
from torchair_ref.inference.guard_kinds import register
from torchair_ref.inference.guard_kinds.base import Code, GuardSpec, RawGuard
from torchair_ref.inference.guard_values import UnknownGuard
from torchair_ref.inference.tensor_spec import TensorSpec

_SIZE_STRIDE = re.compile(r"size=\[([^\]]*)\], stride=\[([^\]]*)\]")


@register
@dataclass(frozen=True)
class Tensor(GuardSpec):
    """The object at `source` fits `spec`: a tensor of `dtype` on `device`, with the static sizes of `size` and the
    strides of `stride` (None: symbolic) in every dim longer than 1."""

    check = "tensor"
    kinds = ("TENSOR_MATCH",)
    reads_value = True
    replayable = True  # it binds its `TensorSpec`, which a replay makes from the spec's layout

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
            return []  # the graph's input check covers it on every call
        if not isinstance(raw.value, torch.Tensor):
            raise UnknownGuard(f"{raw.kind} on {source}, which is not a tensor")
        found = _SIZE_STRIDE.search(raw.text)
        if found is None:
            raise UnknownGuard(f"{raw.kind}: no sizes and strides in {raw.text!r}")
        size, stride = ([None if d.strip() == "None" else int(d) for d in group.split(",") if d.strip()]
                        for group in found.groups())
        return [cls(raw.kind, at, raw.text, source, str(raw.value.dtype), str(raw.value.device), size, stride)]

    @functools.cached_property
    def spec(self) -> TensorSpec:
        return TensorSpec.layout(self.dtype, self.device, self.size, self.stride)

    def validate(self, sources: bool = True) -> None:
        super().validate(sources)
        try:
            self.spec  # noqa: B018 - built here so that a spec no TensorSpec can hold is refused when it loads
        except BrokenCacheError as exc:
            raise UnknownGuard(f"a tensor guard on {self.source} has {exc}") from exc

    def per_call(self) -> bool:
        """A module's tensor (a parameter, a buffer) is checked where the file is loaded, so that one of another
        size makes the file stale (CC-17); on later calls the graph's input check, which lifts every tensor the
        graph reads, compares it on every call (a misfit is then a recompile, CC-12)."""
        return self.when == "call"

    def test(self, code: Code) -> str:
        return f"{code.bind(self.spec)}.fits({code.read(self.source)})"

    def fits(self, value: Any) -> bool:
        return self.spec.fits(value)


def _rebuilt(data: Any) -> TensorSpec:
    """A replay's `TensorSpec` from the layout a table holds; LookupError for one no spec writes (a damaged table is
    not used: the check is written from the specs)."""
    try:
        return TensorSpec.from_json(data)
    except (BrokenCacheError, AttributeError, TypeError) as exc:
        raise LookupError(f"not a tensor's layout: {data!r:.100}") from exc


guard_bindings.made("tensor", TensorSpec, TensorSpec.to_json, _rebuilt)
