"""The ambient state the graph was traced under (SPEC CC-21 (e)): GLOBAL_STATE (grad mode, autocast, default dtype,
thread count, ... as PyTorch's C++ `GlobalStateGuard` serialises it, checked by that class without Dynamo),
TORCH_FUNCTION_MODE_STACK (no mode active) and DEFAULT_DEVICE. DIMENSION_DYNAMIC_MARKING_GUARD needs no check:
`mark_dynamic` changes which sizes a graph keeps symbolic, not its results, and the sizes are checked."""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import torch

from torchair_ref import _torch
from torchair_ref.inference.guard_kinds import NO_CHECK, register
from torchair_ref.inference.guard_kinds.base import Code, GuardSpec, RawGuard

NO_CHECK.add("DIMENSION_DYNAMIC_MARKING_GUARD")


def global_state_checks(state: str) -> dict[bool, Callable[[], bool]]:
    """GLOBAL_STATE as two C++ guards, by the caller's grad mode: the cold trace ran with grad off (CC-16), and so
    does the warm graph whatever the caller's mode, so grad mode is the one field the warm call need not match. Both
    are made here, where the check is written: a torch whose guard class is missing fails the warm start then (it
    falls back to compiling), not a call."""
    GlobalStateGuard = _torch.global_state_guard()  # noqa: N806 - torch's class
    checks = {}
    fields = json.loads(state)
    for grad in (False, True):
        guard = GlobalStateGuard()
        guard.__setstate__(json.dumps({**fields, "grad_mode": grad}, separators=(",", ":")))
        checks[grad] = guard.check
    return checks


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
        json.loads(self.state)

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
