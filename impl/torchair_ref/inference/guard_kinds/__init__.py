"""The guard kinds a warm start checks without Dynamo (SPEC CC-21, CC-22): one registry, one entry per kind.

Each module of this package defines kinds: a `GuardSpec` subclass (`base`) decorated with `register`, holding how
the kind is read from Dynamo's guard tree (`translate` of a `RawGuard`), its typed spec (the dataclass's fields, what
the record stores) and its check code (`test`). The modules are found and imported here, so adding a kind is one
module (or one class in one) and its test. `guard_read` walks Dynamo's tree and calls `translate`; `record` stores
the specs (`to_json`/`from_json`); `guard_check` turns them into the warm call's checks.

Known kinds that need no check at all are listed in `NO_CHECK`; any other kind, source form or value raises
`UnknownGuard` and the function is then not cached.
"""
from __future__ import annotations

import importlib
import pkgutil
import sys
from typing import Any, TypeVar

from torchair_ref.inference.guard_kinds import base
from torchair_ref.inference.guard_kinds.base import Code, GuardSpec, RawGuard
from torchair_ref.inference.guard_values import UnknownGuard, loaded_code_digest

__all__ = ["Code", "GuardSpec", "RawGuard", "UnknownGuard", "from_json", "reads_value", "register", "translate"]

#: by the record's name of a spec (`check`)
CHECKS: dict[str, type[GuardSpec]] = {}
#: by Dynamo's kind: the spec classes that translate it, those with their own `accepts` first
KINDS: dict[str, list[type[GuardSpec]]] = {}
#: Dynamo's kinds that need no check (each module adds its own, with its reason)
NO_CHECK: set[str] = set()
#: by kind (its record name): the digest of the code that registered it, as the process loaded it (the body of its
#: module: `loaded_code_digest`); with `base`'s, what a stored check's replay is written by (`writer_digests`)
LOADED_DIGESTS: dict[str, str] = {}
_BODIES: dict[int, tuple[Any, str]] = {}  # id -> (code, digest); the entry keeps the code, so the id stays its own

Spec = TypeVar("Spec", bound=type[GuardSpec])


def register(cls: Spec) -> Spec:
    """Class decorator: make `cls` the kind named `cls.check`, translating Dynamo's `cls.kinds`."""
    if not cls.check or cls.check in CHECKS:
        raise ValueError(f"guard kind {cls.__qualname__} has no check name or one already taken: {cls.check!r}")
    CHECKS[cls.check] = cls
    body = sys._getframe(1).f_code  # the module body decorating `cls`: digested once for all of its kinds
    if id(body) not in _BODIES:
        _BODIES[id(body)] = (body, loaded_code_digest(body))
    LOADED_DIGESTS[cls.check] = _BODIES[id(body)][1]
    for kind in cls.kinds:
        classes = KINDS.setdefault(kind, [])
        classes.append(cls)
        classes.sort(key=lambda c: c.accepts.__func__ is GuardSpec.accepts.__func__)  # type: ignore[attr-defined]
    return cls


def reads_value(kind: str) -> bool:
    """Whether translating Dynamo's `kind` needs the object at the guard's source."""
    return any(cls.reads_value for cls in KINDS.get(kind, ()))


def translate(raw: RawGuard) -> list[GuardSpec]:
    """CC-21: the specs for one of Dynamo's leaf guards; UnknownGuard naming it when no kind translates it."""
    if raw.kind in NO_CHECK:
        return []
    for cls in KINDS.get(raw.kind, ()):
        if cls.accepts(raw):
            return cls.translate(raw)
    raise UnknownGuard(f"{raw.kind} ({raw.text[:120]!r})")


def writer_digests() -> list[str]:
    """The code of every kind's module and of `base`, as the process loaded it: a kind's check text and constants
    are what this code writes from its spec."""
    return [base.LOADED_DIGEST, *(f"{check}={LOADED_DIGESTS[check]}" for check in sorted(LOADED_DIGESTS))]


def from_json(data: Any, sources: bool = True) -> GuardSpec:
    """A spec as a record stores it; UnknownGuard when it is not one this reference writes (its kind, fields and
    values; with `sources`, the sources it reads too)."""
    if not isinstance(data, dict) or data.get("check") not in CHECKS:
        raise UnknownGuard(f"not a guard spec: {data!r:.200}")
    return CHECKS[data["check"]].from_json(data, sources)


for _module in sorted(info.name for info in pkgutil.iter_modules(__path__)):
    if _module != "base":
        importlib.import_module(f"{__name__}.{_module}")
