"""The structure of what the method reads (SPEC CC-21 (b), (d), (f)): container lengths (LENGTH_CHECK, DICT_LENGTH,
a dict guard's own length), keys present or absent (DICT_CONTAINS: an instance-level override, a hook id),
attributes absent (NO_HASATTR) and tensors passed once (NO_TENSOR_ALIASING)."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import cast

from torchair_ref.inference import guard_spec
from torchair_ref.inference.guard_kinds import register
from torchair_ref.inference.guard_kinds.base import Code, GuardSpec, RawGuard
from torchair_ref.inference.guard_values import UnknownGuard


@register
@dataclass(frozen=True)
class Length(GuardSpec):
    """`len()` of the object at `source` is `length` (DICT_GUARD: the length `guard_read` adds for a dict guard)."""

    check = "length"
    kinds = ("LENGTH_CHECK", "DICT_LENGTH", "DICT_GUARD")
    reads_value = True
    replayable = True

    source: str
    length: int

    @classmethod
    def translate(cls, raw: RawGuard) -> list[GuardSpec]:
        source = raw.checked_source()
        return [cls(raw.kind, raw.when([source]), raw.text, source, _stated_length(raw.text, source, raw.value))]

    def test(self, code: Code) -> str:
        return f"{code.bind(len)}({code.read(self.source)}) == {int(self.length)}"


def _stated_length(text: str, source: str, value: object) -> int:
    """The length Dynamo's own text states (`len(X) == 2`, `not X` for empty), which it took before the cold call
    ran; else the length of `value`."""
    if text == f"not {source}":
        return 0
    stated = re.fullmatch(rf"len\({re.escape(source)}\) == (\d+)", text)
    return int(stated.group(1)) if stated else len(value)  # type: ignore[arg-type]


@register
@dataclass(frozen=True)
class Contains(GuardSpec):
    """`key in` the object at `source` is `present`."""

    check = "contains"
    kinds = ("DICT_CONTAINS",)
    replayable = True

    source: str
    key: int | str
    present: bool

    @classmethod
    def translate(cls, raw: RawGuard) -> list[GuardSpec]:
        source = raw.checked_source()
        negated = raw.text.startswith("not ")
        call = ast.parse(raw.text[4:] if negated else raw.text, mode="eval").body
        if not (isinstance(call, ast.Call) and len(call.args) == 2 and isinstance(call.args[0], ast.Constant)
                and type(call.args[0].value) in (int, str)):
            raise UnknownGuard(f"{raw.kind}: {raw.text!r}")
        key = cast("int | str", call.args[0].value)  # checked above: its type is int or str
        return [cls(raw.kind, raw.when([source]), raw.text, source, key, not negated)]

    def test(self, code: Code) -> str:
        return f"({code.bind(self.key)} in {code.read(self.source)}) is {bool(self.present)!r}"


@register
@dataclass(frozen=True)
class NoAttr(GuardSpec):
    """The object at `source` has no attribute `attr`."""

    check = "no_attr"
    kinds = ("NO_HASATTR",)
    replayable = True

    source: str
    attr: str

    @classmethod
    def translate(cls, raw: RawGuard) -> list[GuardSpec]:
        """Dynamo writes ``not hasattr(X, 'a')`` (torch 2.13, 2.14) or ``hasattr(X, 'a') == False`` (2.11)."""
        source = raw.checked_source()
        negated = raw.text.startswith("not ")
        call = ast.parse(raw.text.removeprefix("not "), mode="eval").body
        if not negated and isinstance(call, ast.Compare) and len(call.ops) == 1 and isinstance(call.ops[0], ast.Eq) \
                and isinstance(call.comparators[0], ast.Constant) and call.comparators[0].value is False:
            negated, call = True, call.left
        # a bare hasattr(...) asserts the attribute is there: the opposite of this kind, refused like any other form
        if not (negated and isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                and call.func.id == "hasattr" and len(call.args) == 2 and isinstance(call.args[1], ast.Constant)
                and isinstance(call.args[1].value, str)):
            raise UnknownGuard(f"{raw.kind}: {raw.text!r}")
        attr = call.args[1].value
        return [cls(raw.kind, raw.when([source]), raw.text, source, attr)]

    def test(self, code: Code) -> str:
        return f"not {code.bind(hasattr)}({code.read(self.source)}, {code.bind(self.attr)})"


@register
@dataclass(frozen=True)
class Distinct(GuardSpec):
    """The objects at `sources` are distinct objects."""

    check = "distinct"
    kinds = ("NO_TENSOR_ALIASING",)
    replayable = True

    sources: list[str]

    @classmethod
    def translate(cls, raw: RawGuard) -> list[GuardSpec]:
        if not raw.parts:
            return []  # the same guard, listed again under each of its tensors
        call = ast.parse(raw.text, mode="eval").body
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "check_no_aliasing"):
            raise UnknownGuard(f"{raw.kind}: {raw.text!r}")
        sources = [ast.unparse(arg) for arg in call.args]
        for item in sources:
            guard_spec.parse_source(item)
        return [cls(raw.kind, raw.when(sources), raw.text, sources)]

    def test(self, code: Code) -> str:
        codes = [code.read(s) for s in self.sources]
        return " and ".join(f"{a} is not {b}" for n, a in enumerate(codes) for b in codes[n + 1:]) or "True"
