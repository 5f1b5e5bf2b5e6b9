"""What Dynamo guarded by id (SPEC CC-21 (f), CC-22): TYPE_MATCH (the object's class) and ID_MATCH (the object
itself). Ids differ per process, so a class is named by its qualified name and, outside torch, a digest of its code
(`class_digest`); an object by what it is (`describe_object`: module, qualified name, code digest, constant)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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
    """The class of the object at `source` is named `name` and its code digests to `digest` (None inside torch)."""

    check = "class"
    kinds = ("TYPE_MATCH",)
    reads_value = True

    source: str
    name: str
    digest: str | None

    @classmethod
    def translate(cls, raw: RawGuard) -> list[GuardSpec]:
        source = raw.checked_source()
        described = describe_class(type(raw.value))
        return [cls(raw.kind, raw.when([source]), raw.text, source, described["name"], described["digest"])]

    def test(self, code: Code) -> str:
        value = code.read(self.source)
        live = type_named(self.name)
        if live is None or class_digest(live) != self.digest:
            return f"{code.bind(self.fits)}({value})"  # not reachable by name here: compared by name and digest
        return f"{code.bind(type)}({value}) is {code.bind(live)}"

    def fits(self, value: Any) -> bool:
        cls = type(value)
        return (qualified_name(cls), class_digest(cls)) == (self.name, self.digest)


@register
@dataclass(frozen=True)
class Object(GuardSpec):
    """The object at `source` is the one `object` describes (`describe_object`)."""

    check = "object"
    kinds = ("ID_MATCH",)
    reads_value = True

    source: str
    object: dict[str, Any]

    @classmethod
    def translate(cls, raw: RawGuard) -> list[GuardSpec]:
        source = raw.checked_source()
        return [cls(raw.kind, raw.when([source]), raw.text, source, describe_object(raw.value))]

    def test(self, code: Code) -> str:
        return f"{code.bind(describe_object)}({code.read(self.source)}) == {code.bind(self.object)}"
