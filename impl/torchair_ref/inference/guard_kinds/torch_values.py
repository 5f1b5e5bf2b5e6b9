"""EQUALS_MATCH on a `torch.dtype` or `torch.device` (SPEC CC-21 (c), (f)): the value a method reads from `torch`
or from its module and compares by equality, e.g. `torch.ones(t, t, dtype=torch.bool)` inside the traced method.
Stored by its text (`torch.bool`, `cuda:1`), which names the same value in every process (CC-22)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from torchair_ref.inference.guard_kinds import register
from torchair_ref.inference.guard_kinds.base import Code, GuardSpec, RawGuard
from torchair_ref.inference.guard_values import UnknownGuard

_TYPES = {"torch.dtype": torch.dtype, "torch.device": torch.device}


def torch_value(type_name: str, text: str) -> Any:
    """The dtype or device a spec names (pure); UnknownGuard for anything else."""
    if type_name == "torch.dtype":
        found = getattr(torch, text.removeprefix("torch."), None)
        if isinstance(found, torch.dtype) and str(found) == text:
            return found
    elif type_name == "torch.device":
        try:
            return torch.device(text)
        except (RuntimeError, TypeError) as exc:
            raise UnknownGuard(f"{text!r} is not a device") from exc
    raise UnknownGuard(f"{text!r} is not a value of type {type_name}")


@register
@dataclass(frozen=True)
class TorchValue(GuardSpec):
    """The object at `source` is a `type` (torch.dtype or torch.device) equal to the one `value` names."""

    check = "equals_torch"
    kinds = ("EQUALS_MATCH",)
    reads_value = True

    source: str
    value: str
    type: str

    @classmethod
    def accepts(cls, raw: RawGuard) -> bool:
        return type(raw.value) in _TYPES.values()

    @classmethod
    def translate(cls, raw: RawGuard) -> list[GuardSpec]:
        source = raw.checked_source()
        name = next(name for name, kind in _TYPES.items() if type(raw.value) is kind)
        return [cls(raw.kind, raw.when([source]), raw.text, source, str(raw.value), name)]

    def validate(self, sources: bool = True) -> None:
        super().validate(sources)
        torch_value(self.type, self.value)

    def test(self, code: Code) -> str:
        value = code.read(self.source)
        return (f"{code.bind(type)}({value}) is {code.bind(_TYPES[self.type])} "
                f"and {value} == {code.bind(torch_value(self.type, self.value))}")
