"""The ambient state the graph was traced under (SPEC CC-21 (e)): GLOBAL_STATE (grad mode, autocast, default dtype,
thread count, ... as PyTorch's C++ `GlobalStateGuard` serialises it, checked by that class without Dynamo),
TORCH_FUNCTION_MODE_STACK (no mode active) and DEFAULT_DEVICE. DIMENSION_DYNAMIC_MARKING_GUARD needs no check:
`mark_dynamic` changes which sizes a graph keeps symbolic, not its results, and the sizes are checked."""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from torchair_ref import _torch
from torchair_ref.inference.guard_kinds import NO_CHECK, register
from torchair_ref.inference.guard_kinds.base import Code, GuardSpec, RawGuard

NO_CHECK.add("DIMENSION_DYNAMIC_MARKING_GUARD")


def global_state_checks(state: str) -> dict[bool, Callable[[], bool]]:
    """GLOBAL_STATE as two C++ guards, by the caller's grad mode: the cold trace ran with grad off (CC-16), and so
    does the warm graph whatever the caller's mode, so grad mode is the one field the warm call need not match. Both
    are made here, where the check is written: a torch whose guard class is missing fails the warm start then (it
    falls back to compiling), not a call. A `state` not of the form this torch writes is a ValueError (CC-17)."""
    GlobalStateGuard = _torch.global_state_guard()  # noqa: N806 - torch's class
    live = GlobalStateGuard()
    fields = state_fields(state, json.loads(live.__getstate__()))
    checks = {}
    for grad in (False, True):
        guard = GlobalStateGuard()
        guard.__setstate__(json.dumps({**fields, "grad_mode": grad}, separators=(",", ":")))
        checks[grad] = guard.check
    return checks


def state_fields(state: str, live: dict[str, Any]) -> dict[str, Any]:
    """CC-17: the fields of a recorded GLOBAL_STATE, where they have the form of `live` (this torch's own state, as
    `GlobalStateGuard.__getstate__` writes it): every field it writes, each a JSON value of the same kind (a number
    for a number, true or false for a flag). Else ValueError naming the field: torch's C++ reader aborts the process
    on a field it lacks or of another kind (a record edited and resealed), where this is a broken record (pure)."""
    fields = json.loads(state)
    if not isinstance(fields, dict):
        raise ValueError(f"the recorded GLOBAL_STATE is a JSON {type(fields).__name__}, not an object")
    for name, value in live.items():
        if name not in fields:
            raise ValueError(f"the recorded GLOBAL_STATE lacks {name!r}, which this torch writes")
        if _kind(fields[name]) != _kind(value):
            raise ValueError(f"the recorded GLOBAL_STATE's {name!r} is {fields[name]!r:.40}: this torch writes "
                             f"{_kind(value)} there")
    return fields


def _kind(value: Any) -> str:
    """A JSON value's kind as torch's reader tells them apart: true/false is no number, an integer is one."""
    if isinstance(value, bool):
        return "a flag"
    if isinstance(value, (int, float)):
        return "a number"
    return f"a JSON {type(value).__name__}"


@register
@dataclass(frozen=True)
class GlobalState(GuardSpec):
    """The global state serialised in `state` (JSON, as `GlobalStateGuard.__getstate__` writes it) holds."""

    check = "global_state"
    kinds = ("GLOBAL_STATE",)

    state: str

    @classmethod
    def translate(cls, raw: RawGuard) -> list[GuardSpec]:
        state = raw.text.partition(" against ")[2]
        json.loads(state)
        return [cls(raw.kind, "call", raw.text[:80], state)]

    def validate(self, sources: bool = True) -> None:
        if not isinstance(json.loads(self.state), dict):  # its fields are checked where the C++ guards are made
            raise ValueError(f"the recorded GLOBAL_STATE is not a JSON object: {self.state:.40}")

    def test(self, code: Code) -> str:
        return f"{code.bind(global_state_checks(self.state))}[{code.bind(torch.is_grad_enabled)}()]()"


@register
@dataclass(frozen=True)
class FunctionModes(GuardSpec):
    """No `TorchFunctionMode` is active."""

    check = "function_modes"
    kinds = ("TORCH_FUNCTION_MODE_STACK",)
    replayable = True

    @classmethod
    def translate(cls, raw: RawGuard) -> list[GuardSpec]:
        return [cls(raw.kind, "call", raw.text)]

    def test(self, code: Code) -> str:
        return f"not {code.bind(_torch.torch_function_mode_count())}()"


@register
@dataclass(frozen=True)
class DefaultDevice(GuardSpec):
    """`torch.set_default_device` names `device` (None: none set)."""

    check = "default_device"
    kinds = ("DEFAULT_DEVICE",)
    reads_value = True
    replayable = True

    device: str | None

    @classmethod
    def translate(cls, raw: RawGuard) -> list[GuardSpec]:
        return [cls(raw.kind, "call", raw.text, None if raw.value is None else str(raw.value))]

    def test(self, code: Code) -> str:
        current = f"{code.bind(_torch.default_device_module())}.CURRENT_DEVICE"
        if self.device is None:
            return f"{current} is None"
        return f"{current} is not None and {code.bind(str)}({current}) == {code.bind(self.device)}"
