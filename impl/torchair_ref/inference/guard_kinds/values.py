"""Values Dynamo guarded by identity with a constant or by equality (SPEC CC-21 (b), (c)): NONE_MATCH, TRUE_MATCH,
FALSE_MATCH and EQUALS_MATCH on a value a JSON literal holds (None, bool, int, str, finite float, tuples and lists
of these)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from torchair_ref.inference.guard_kinds import register
from torchair_ref.inference.guard_kinds.base import Code, GuardSpec, RawGuard
from torchair_ref.inference.guard_values import from_literal, literal, qualified_name, type_named

_CONSTANTS = {"NONE_MATCH": None, "TRUE_MATCH": True, "FALSE_MATCH": False}


@register
@dataclass(frozen=True)
class Constant(GuardSpec):
    """The object at `source` is None, True or False."""

    check = "constant"
    kinds = tuple(_CONSTANTS)
    replayable = True

    source: str
    value: bool | None

    @classmethod
    def translate(cls, raw: RawGuard) -> list[GuardSpec]:
        source = raw.checked_source()
        return [cls(raw.kind, raw.when([source]), raw.text, source, _CONSTANTS[raw.kind])]

    def test(self, code: Code) -> str:
        return f"{code.read(self.source)} is {code.bind(self.value)}"


@register
@dataclass(frozen=True)
class Equals(GuardSpec):
    """The object at `source` has the type named `type` and equals `value` (a JSON literal, `literal`)."""

    check = "equals"
    kinds = ("EQUALS_MATCH",)
    reads_value = True
    replayable = True

    source: str
    value: Any
    type: str

    @classmethod
    def translate(cls, raw: RawGuard) -> list[GuardSpec]:
        source = raw.checked_source()
        value = raw.value
        return [cls(raw.kind, raw.when([source]), raw.text, source, literal(value), qualified_name(type(value)))]

    def test(self, code: Code) -> str:
        value = code.read(self.source)
        return (f"{code.bind(type)}({value}) is {code.bind(type_named(self.type))} "
                f"and {value} == {code.bind(from_literal(self.value))}")
