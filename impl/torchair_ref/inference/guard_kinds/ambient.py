"""The ambient state the graph was traced under (SPEC CC-21 (e)): GLOBAL_STATE (grad mode, autocast, default dtype,
thread count, ... as PyTorch's C++ `GlobalStateGuard` serialises it, checked by that class without Dynamo),
TORCH_FUNCTION_MODE_STACK (no mode active) and DEFAULT_DEVICE. DIMENSION_DYNAMIC_MARKING_GUARD needs no check:
`mark_dynamic` changes which sizes a graph keeps symbolic, not its results, and the sizes are checked."""
from __future__ import annotations

import json
import math
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
    text = live.__getstate__()
    own = json.loads(text)
    recorded = json.loads(state)
    if isinstance(recorded, dict) and type(recorded.get("grad_mode")) is type(own.get("grad_mode")) is bool:
        # The common case: the recorded state is, but for grad mode, the live one as this torch writes it (then it
        # is one torch reads, and the live guard already holds it for the live grad mode: a fifth less time)
        try:
            same = _text({**recorded, "grad_mode": own["grad_mode"]}) == text
        except ValueError:  # a value JSON cannot write (NaN): the slow path names it
            same = False
        if same:
            other = GlobalStateGuard()
            other.__setstate__(_text({**recorded, "grad_mode": not own["grad_mode"]}))
            return {own["grad_mode"]: live.check, not own["grad_mode"]: other.check}
    fields = state_fields(state, own)
    checks = {}
    for grad, guard in ((False, live), (True, GlobalStateGuard())):  # the live state's guard read, then set
        guard.__setstate__(_text({**fields, "grad_mode": grad}))
        checks[grad] = guard.check
    return checks


def _text(fields: dict[str, Any]) -> str:
    """Fields as JSON, as `GlobalStateGuard.__getstate__` writes them (no spaces)."""
    return json.dumps(fields, separators=(",", ":"), allow_nan=False)


def state_fields(state: str, live: dict[str, Any]) -> dict[str, Any]:
    """CC-17: the fields of a recorded GLOBAL_STATE that torch reads, where they have the form of `live` (this torch's
    own state, as `GlobalStateGuard.__getstate__` writes it), else ValueError naming the field. torch's C++ reader
    aborts the whole process on a field it lacks, of another kind (a number for a flag), a number it cannot hold, a
    text it cannot parse or a list shorter than its own (a record edited and resealed), where this is a broken
    record. Fields torch does not write are left out: it never reads them (pure)."""
    fields = json.loads(state)
    if not isinstance(fields, dict):
        raise ValueError(f"the recorded GLOBAL_STATE is a JSON {type(fields).__name__}, not an object")
    conformed: dict[str, Any] = _conformed(fields, live, "")
    return conformed


def _conformed(value: Any, like: Any, where: str) -> Any:
    """`value` as torch reads it where it writes `like` (unread fields left out), or ValueError naming `where`."""
    if isinstance(like, dict) and isinstance(value, dict):
        missing = next((name for name in like if name not in value), None)
        if missing is not None:
            raise ValueError(f"the recorded GLOBAL_STATE lacks {where + missing!r}, which this torch writes")
        return {name: _conformed(value[name], item, f"{where}{name}.") for name, item in like.items()}
    if isinstance(like, list) and isinstance(value, list) and len(value) >= len(like):  # its length read as ours
        return [_conformed(item, own, f"{where[:-1]}[{i}].") for i, (item, own) in enumerate(zip(value, like))]
    if _kind(value) != _kind(like) or isinstance(like, list) or not _readable(value):
        raise ValueError(f"the recorded GLOBAL_STATE's {where[:-1]!r} is {value!r:.40}: this torch writes "
                         f"{_kind(like)} there")
    return value


def _kind(value: Any) -> str:
    """A JSON value's kind as torch's reader tells them apart: true/false is no number, an integer is one."""
    if isinstance(value, bool):
        return "a flag"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "a list as long as its own"
    return {dict: "an object", str: "a text", type(None): "null"}.get(type(value), type(value).__name__)


def _readable(value: Any) -> bool:
    """Whether torch's JSON reader parses the value: a number it can hold (no NaN, infinity or integer past 64
    bits), a text of valid Unicode."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, int):
        return -(2**63) <= value < 2**64
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
    return True


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
