"""What Dynamo guarded by id (SPEC CC-21 (f), CC-22): TYPE_MATCH (the object's class) and ID_MATCH (the object
itself). Ids differ per process, so a class is named by its qualified name and, outside torch, a digest of what the
cold trace could have read of it (`class_digest`: its members' names and constants, the code of the methods Dynamo
traced); an object by what it is (`describe_object`: module, qualified name, code digest, constant)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from torchair_ref.inference import guard_bindings
from torchair_ref.inference.guard_kinds import register
from torchair_ref.inference.guard_kinds.base import Code, GuardSpec, RawGuard
from torchair_ref.inference.guard_values import (
    class_digest,
    describe_class,
    describe_object,
    qualified_name,
    type_named,
)


@register
@dataclass(frozen=True)
class Class(GuardSpec):
    """The class of the object at `source` is named `name` and digests to `digest` (None inside torch), its methods
    named in `members` (those the cold trace reached) by their code."""

    check = "class"
    kinds = ("TYPE_MATCH",)
    reads_value = True
    replayable = True  # its text depends on the live class: `recipes` has the replay look it up and digest it

    source: str
    name: str
    digest: str | None
    members: list[str] | None = None

    @classmethod
    def translate(cls, raw: RawGuard) -> list[GuardSpec]:
        source = raw.checked_source()
        described = describe_class(type(raw.value), raw.traced)
        return [cls(raw.kind, raw.when([source]), raw.text, source, described["name"], described["digest"],
                    described["members"])]

    def test(self, code: Code) -> str:
        value = code.read(self.source)
        live = type_named(self.name)
        if live is None or class_digest(live, self.members) != self.digest:
            return f"{code.bind(self.fits)}({value})"  # not reachable by name here: compared by name and digest
        return f"{code.bind(type)}({value}) is {code.bind(live)}"

    def fits(self, value: Any) -> bool:
        cls = type(value)
        return (qualified_name(cls), class_digest(cls, self.members)) == (self.name, self.digest)

    def recipes(self, bound: list[Any]) -> list[Any] | None:
        """The class found by name with the recorded digest (what makes `test` write `is`); none for `fits`."""
        if len(bound) != 2 or bound[0] is not type:
            return [None]
        return [guard_bindings.recipe(type), guard_bindings.class_recipe(self.name, self.digest, self.members)]


@register
@dataclass(frozen=True)
class Object(GuardSpec):
    """The object at `source` is the one `object` describes (`describe_object`)."""

    check = "object"
    kinds = ("ID_MATCH",)
    reads_value = True
    replayable = True

    source: str
    object: dict[str, Any]

    @classmethod
    def translate(cls, raw: RawGuard) -> list[GuardSpec]:
        source = raw.checked_source()
        return [cls(raw.kind, raw.when([source]), raw.text, source, describe_object(raw.value, raw.traced))]

    def test(self, code: Code) -> str:
        """Identity first: the object that last passed, else the full check (which describes the object, a code
        digest for a function: microseconds) that remembers the object when it passes."""
        value, known = code.read(self.source), code.bind(_Known(self.object))
        return f"({value} is {known}.value or {known}.check({value}))"


class _Known:
    """One `Object` check's memory: the last object that passed it."""

    __slots__ = ("described", "value")

    def __init__(self, described: dict[str, Any]) -> None:
        self.described, self.value = described, _NOTHING

    def check(self, value: Any) -> bool:
        if describe_object(value, like=self.described) == self.described:
            self.value = value
            return True
        return False


_NOTHING = object()
guard_bindings.made("known", _Known, lambda known: known.described, _Known)
