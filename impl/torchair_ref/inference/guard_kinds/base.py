"""What every guard kind is made of (SPEC CC-21, CC-22): the typed spec a record holds, and the raw guard it is read
from.

A kind is one subclass of `GuardSpec` (a frozen dataclass) registered with `guard_kinds.register`: its class
variables say which of Dynamo's guard kinds it translates (`kinds`) and under which name the record stores it
(`check`); `translate` turns one raw guard of Dynamo's tree (`RawGuard`) into specs; `test` writes the Python
boolean expression a warm start evaluates, given a `Code` that reads sources and binds constants. Nothing in a spec
depends on the process (no ids, no addresses, no hash order: CC-22).
"""
from __future__ import annotations

import dataclasses
import operator
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from torchair_ref.inference import guard_spec
from torchair_ref.inference.guard_values import UnknownGuard, loaded_code_digest


@dataclass(frozen=True)
class RawGuard:
    """One leaf guard of Dynamo's tree at the cold trace: its kind (`TYPE_MATCH`, ...), the source it guards
    (`L['x']`, None for the root's), its verbose code text (comments stripped), the object at the source before the
    cold call (read only for kinds whose spec class sets `reads_value`), the frame's locals that are not arguments
    (`self`, closure cells), the sources that are inputs of the compiled graph, and the code Dynamo traced (None
    where unknown: a class is then identified by all of its code)."""

    kind: str
    source: str | None
    parts: tuple[str, ...]
    value: Any = None
    fixed: frozenset[str] = frozenset()
    graph_inputs: frozenset[str] = frozenset()
    traced: frozenset[types.CodeType] | None = None

    @property
    def text(self) -> str:
        return self.parts[0] if self.parts else ""

    def when(self, sources: list[str]) -> str:
        return guard_spec.when(sources, self.fixed)

    def checked_source(self) -> str:
        """The guard's source, parsed (UnknownGuard when it has none or one a warm start cannot follow)."""
        if self.source is None:
            raise UnknownGuard(f"{self.kind} ({self.text!r}) on no source")
        guard_spec.parse_source(self.source)
        return self.source


class Code(Protocol):
    """What `GuardSpec.test` writes with: code reading a source, and a name bound to a constant."""

    def read(self, source: str) -> str: ...

    def bind(self, value: Any) -> str: ...


@dataclass(frozen=True)
class GuardSpec:
    """One check a warm start runs without Dynamo, translated from one of Dynamo's guards.

    `guard` is Dynamo's kind, `text` Dynamo's text (for messages), `when` "call" when it reads the call's arguments
    or ambient state, "first" when it reads only the module and the code it reaches."""

    #: the name the record stores the spec under (`{"check": ...}`)
    check: ClassVar[str] = ""
    #: Dynamo's guard kinds (leaf class names) this spec translates
    kinds: ClassVar[tuple[str, ...]] = ()
    #: whether `translate` needs the object at the guard's source (`RawGuard.value`)
    reads_value: ClassVar[bool] = False
    #: whether `test` writes the same text and binds the same constants from the same spec in every process (no
    #: live lookup decides them, or `recipes` has the warm start check it), so that a warm start may rebuild its
    #: constants without the spec (`guard_bindings`)
    replayable: ClassVar[bool] = False

    guard: str
    when: str
    text: str

    @classmethod
    def accepts(cls, raw: RawGuard) -> bool:
        """Whether this class translates `raw` (a kind several classes share picks by its value: the classes that
        override `accepts` are asked before those that do not)."""
        return True

    @classmethod
    def translate(cls, raw: RawGuard) -> list[GuardSpec]:
        """The specs for one raw guard (none when it needs no check); UnknownGuard when it cannot be checked."""
        raise NotImplementedError

    def test(self, code: Code) -> str:
        """The check as a Python boolean expression over `code.read(source)` and `code.bind(constant)`."""
        raise NotImplementedError

    def per_call(self) -> bool:
        """Whether the warm call's generated check runs it on every call (else only where the file is loaded)."""
        return True

    def recipes(self, bound: list[Any]) -> list[Any] | None:
        """How a warm start rebuilds the constants `test` bound (`bound`, in order) where the kind knows more than
        their values (a None in the list: it cannot, and the spec is written again); None: from their values
        (`guard_bindings.recipe`)."""
        return None

    def read_sources(self) -> list[str]:
        """The guard sources the check reads (a `source` field, or a `sources` list)."""
        source, sources = getattr(self, "source", None), getattr(self, "sources", None)
        return list(sources) if isinstance(sources, list) else [source] if isinstance(source, str) else []

    def validate(self, sources: bool = True) -> None:
        """Raise UnknownGuard when a spec read from a file is not one this reference could have written: its values
        (a kind checks its own), and with `sources`, the sources it reads too."""
        if sources:
            for source in self.read_sources():
                guard_spec.parsed_source(source)

    def to_json(self) -> dict[str, Any]:
        return {"check": self.check, **dataclasses.asdict(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any], sources: bool = True) -> GuardSpec:
        names = _FIELD_NAMES.get(cls) or _field_names(cls)
        try:
            values = _GETTERS[cls](data)  # every field's value, in C (a guard has at least three fields: a tuple)
        except KeyError:
            raise UnknownGuard(f"a {cls.check} guard lacks {[name for name in names if name not in data]}") from None
        # The fields set as `__init__` would set them, without calling it: a record holds hundreds of specs
        # (reading GPT-2's 544 took 1.18 ms with the call, 0.74 ms without). `__post_init__` runs where it would
        # change something.
        spec = object.__new__(cls)
        spec.__dict__.update(zip(names, values))
        if cls.__post_init__ is not GuardSpec.__post_init__ or not isinstance(spec.text, str) or len(spec.text) > 300:
            spec.__post_init__()
        if spec.when not in ("call", "first"):
            raise UnknownGuard(f"a {cls.check} guard has when={spec.when!r}")
        spec.validate(sources)
        return spec

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", self.text[:300])


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
#: by kind: a function of a spec's JSON giving its fields' values, in `_FIELD_NAMES` order
_GETTERS: dict[type, Callable[[dict[str, Any]], tuple[Any, ...]]] = {}


def _field_names(cls: type[GuardSpec]) -> tuple[str, ...]:
    """A kind's fields, in order (read once per kind: a record holds hundreds of specs)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
        _GETTERS[cls] = operator.itemgetter(*names)
    return names


LOADED_DIGEST = loaded_code_digest(sys._getframe(0).f_code)  # this module's code as the process loaded it
