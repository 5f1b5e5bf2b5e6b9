"""A stored per-call check's constants, rebuilt without reading its guard specs (SPEC CC-14, CC-21).

The per-call check a record stores (`guard_check.stored_code`) names constants (`_tq_b0`, `_tq_b1`, ...) that a warm
start binds again: classes, builtins, literals, the memory of an ID_MATCH. Binding them by writing every spec's
check again (the outline pass) was a third of a transformers model's warm guard work, and reading the specs into
typed objects another tenth. So the record also keeps a replay table (`table`):

- each constant a *replayable* kind bound, as a recipe: a literal (None, bool, int, finite float, str and tuples of
  these, of exactly those types), one of the helpers the check writers bind (`_HELPERS`: builtins, the expression
  functions, torch's grad mode, function-mode stack and default device), a class by its qualified name (looked up
  as `type_named` does, as the kinds do), or an object a kind made from its spec alone (`made`: an ID_MATCH's
  `_Known`). A kind is replayable when its check text and constants follow from its spec alone
  (`GuardSpec.replayable`); a spec whose constants have no recipe is re-run instead;
- the specs to *re-run*: those of the other kinds (TYPE_MATCH, whose text depends on whether the live class still
  has the recorded digest), written again at the warm start, each bound constant under the name the table gives it
  (the same object where a recipe bound that name too);
- the writer: the digests of the code that writes the check and its constants (`writer`). A table written by other
  code is not used, and the check is written from every spec as before.

A warm start uses the table only when the writer is this process's, every recipe rebuilds, and the re-run specs
give the outline the cold process recorded (`replayed`); any doubt writes the check from every spec, which is always
right. The table is read from a sealed file (`artifact`): its specs and its table were written together.
"""
from __future__ import annotations

import builtins
import hashlib
import marshal
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

import torch

from torchair_ref import _torch
from torchair_ref.inference import guard_expressions, guard_values
from torchair_ref.inference.guard_values import loaded_code_digest, type_named

#: the helpers the kinds bind, and only those (a table cannot name `exec` or `open`), by a name that holds in every
#: process; taken at import, so a warm start binds this package's helper even where a builtin or `math` function was
#: replaced later (never code that is not ours)
_HELPERS: dict[str, Any] = {
    **{f"builtins.{name}": getattr(builtins, name) for name in ("type", "len", "hasattr", "str")},
    **{f"expressions.{name}": value for name, value in guard_expressions.FUNCTIONS.items()},
    "torch.is_grad_enabled": torch.is_grad_enabled,
    "torch.function_mode_count": _torch.torch_function_mode_count(),
    "torch.default_device_module": _torch.default_device_module(),
}
_HELPER_NAMES = {id(value): name for name, value in reversed(list(_HELPERS.items()))}
#: by tag: (class, its spec data, the object from that data) for the objects a kind makes from its spec (`made`)
_MADE: dict[str, tuple[type, Callable[[Any], Any], Callable[[Any], Any]]] = {}
_LITERALS = (type(None), bool, int, float, str)


def made(tag: str, cls: type, data: Callable[[Any], Any], rebuild: Callable[[Any], Any]) -> None:
    """Declare the objects of `cls` that a kind binds, made from its spec alone: `data(obj)` is JSON, and
    `rebuild(data)` makes an object that checks as `obj` did when it was bound."""
    _MADE[tag] = (cls, data, rebuild)


def recipe(value: Any) -> Any:
    """How a warm start rebuilds `value` without the spec that bound it (JSON), or None when it cannot."""
    helper = _HELPER_NAMES.get(id(value))
    if helper is not None and _HELPERS[helper] is value:
        return {"helper": helper}
    if _literal(value):
        return {"literal": list(value) if type(value) is tuple else value, "tuple": type(value) is tuple}
    for tag, (cls, data, _) in _MADE.items():
        if type(value) is cls:
            return {"made": tag, "data": data(value)}
    if isinstance(value, type) and type_named(guard_values.qualified_name(value)) is value:
        return {"class": guard_values.qualified_name(value)}
    return None


def class_recipe(name: str, digest: str | None, members: Sequence[str] | None) -> dict[str, Any]:
    """The recipe of the class named `name` whose `class_digest` for `members` is `digest` (`rebuilt` finds it by
    name and checks the digest): what a TYPE_MATCH spec binds, rebuilt without reading the spec."""
    return {"class": name, "digest": digest, "members": None if members is None else list(members)}


def _literal(value: Any) -> bool:
    if type(value) is tuple:
        return all(type(item) in _LITERALS and item == item and item not in (math.inf, -math.inf) for item in value)
    return type(value) in _LITERALS and value == value and value not in (math.inf, -math.inf)


def rebuilt(found: Any) -> Any:
    """The object a recipe names in this process; LookupError when it names none."""
    if type(found) is not dict:
        raise LookupError(f"not a recipe: {found!r:.100}")
    made = found.get("made")  # the kinds of recipe in the order a transformers model's table holds the most
    if made is not None:
        return _MADE[made][2](found["data"])
    if "literal" in found:
        value = tuple(found["literal"]) if found.get("tuple") else found["literal"]
        if not _literal(value):
            raise LookupError(f"not a literal: {value!r:.100}")
        return value
    if "helper" in found:
        return _HELPERS[found["helper"]]
    if "class" in found and isinstance(found["class"], str):
        cls = type_named(found["class"])
        if cls is None:
            raise LookupError(f"no class {found['class']} here")
        members = found.get("members")
        if "digest" in found and guard_values.class_digest(cls, members) != found["digest"]:
            raise LookupError(f"the class {found['class']} differs from the recorded one")
        return cls
    raise LookupError(f"not a recipe: {found!r:.100}")


def _same(value: Any, other: Any) -> bool:
    """Whether a rebuilt constant checks as the bound one: the same object, an equal literal of the same types, or an
    object of a `made` class (made from the same spec data)."""
    if value is other:
        return True
    if type(value) is not type(other):
        return False
    if not _literal(value):
        return any(type(value) is cls for cls, _, _ in _MADE.values())
    return value == other and (type(value) is not tuple or all(type(a) is type(b) for a, b in zip(value, other)))


def table(writes: Sequence[str], signature: Sequence[str], specs: Sequence[Any], names: Sequence[Sequence[str]],
          namespace: dict[str, Any], call: list[int]) -> dict[str, Any] | None:
    """At the cold process: the replay table of a check written from the per-call `specs` (the record's specs at
    indices `call`), which bound `names[k]` for `specs[k]` in `namespace`; None when its re-run outline cannot be
    written (a spec binding a name another object holds)."""
    binds: dict[str, list[Any]] = {}
    rerun: list[list[Any]] = []
    for index, (spec, own) in enumerate(zip(specs, names)):
        recipes = [None]
        if getattr(type(spec), "replayable", False):
            recipes = spec.recipes([namespace[name] for name in own]) or [recipe(namespace[name]) for name in own]
        try:
            same = (None not in recipes and len(recipes) == len(own)
                    and all(_same(rebuilt(r), namespace[n]) for r, n in zip(recipes, own)))
        except (LookupError, TypeError, ValueError):
            same = False
        if not same:
            rerun.append([index, list(own)])
            continue
        for name, made in zip(own, recipes):  # each spec's recipe of a name kept: each holds at the warm start
            if made not in binds.setdefault(name, []):
                binds[name].append(made)
    head = _head(writes, signature, call, rerun)
    # as a warm start will: the recipes' constants first, then the re-run specs' (a fresh object each, as `fits`)
    bound = _rebuilt_all(binds)
    if bound is None:
        return None
    found = outline(head, [specs[index] for index, _ in rerun], [own for _, own in rerun], bound)
    if found is None:
        return None
    return {"writer": list(writes), "outline": found, "call": call, "rerun": rerun, "binds": binds}


def replayed(found: Any, writes: Sequence[str], signature: Sequence[str],
             spec_at: Callable[[int], Any]) -> dict[str, Any] | None:
    """At a warm start: the stored check's constants by name, from the replay table `found` (`table`) and the record
    spec at each index (`spec_at`, asked only for the specs to re-run); None when the table is not one this process
    would write: another writer, a recipe that names nothing here, or a re-run outline that differs (a class whose
    digest changed)."""
    replay = found if type(found) is Checked else check(found)
    if replay is None or replay["writer"] != list(writes):
        return None
    bound = _rebuilt_all(replay["binds"])
    if bound is None:
        return None
    call, rerun = replay["call"], replay["rerun"]
    specs = [spec_at(call[index]) for index, _ in rerun]
    if outline(_head(writes, signature, call, rerun), specs, [own for _, own in rerun], bound) != replay["outline"]:
        return None
    return bound


def _head(writes: Sequence[str], signature: Sequence[str], call: list[int], rerun: list[list[Any]]) -> list[Any]:
    """What a replay's outline is written after: the writer, the check's signature, the per-call specs' indices and
    the indices (among those) of the specs re-run."""
    return [*writes, *signature, call, [index for index, _ in rerun]]


def writer(check_writer: Sequence[str], kinds: Sequence[str]) -> list[str]:
    """The digests of the code that writes a check and its constants: the check's writer (`guard_check`'s), every
    guard kind's (`guard_kinds.writer_digests`), the class and code identities' and this module's."""
    return [*check_writer, *kinds, guard_values.LOADED_DIGEST, LOADED_DIGEST]


def outline(head: Sequence[Any], specs: Sequence[Any], names: Sequence[Sequence[str]],
            bound: dict[str, Any]) -> str | None:
    """The SHA-256 of the re-run specs' check texts (each read of a source a placeholder) after `head` (the writer,
    signature and indices), binding each spec's constants under its `names` in `bound` (None when a spec binds
    another number of constants, or under a name another object holds)."""
    sources: list[str] = []
    texts: list[str] = []
    for spec, own in zip(specs, names):
        code = _Renamed(own, bound, sources)
        texts.append(spec.test(code))
        if code.wrong or code.left():
            return None
    return hashlib.sha256(marshal.dumps((list(head), texts, sources), 2)).hexdigest()


def _rebuilt_all(binds: dict[str, list[Any]]) -> dict[str, Any] | None:
    """Each name's constant from its recipes, every one of which must rebuild to the same object (None otherwise)."""
    bound: dict[str, Any] = {}
    try:
        for name, recipes in binds.items():
            if not (isinstance(name, str) and name.startswith("_tq_b") and name.isidentifier()
                    and isinstance(recipes, list)):
                return None
            first = bound[name] = rebuilt(recipes[0])
            if any(not _same(rebuilt(made), first) for made in recipes[1:]):
                return None
    except (LookupError, TypeError, ValueError, IndexError):
        return None
    return bound


class _Renamed:
    """`guard_kinds.Code` that reads sources as placeholders and binds each constant under the next given name."""

    def __init__(self, names: Sequence[str], bound: dict[str, Any], sources: list[str]) -> None:
        self._names, self._bound, self._sources = list(names), bound, sources
        self._next, self.wrong = 0, False

    def read(self, source: str) -> str:
        self._sources.append(source)
        return f"_tq_p{len(self._sources) - 1}"

    def bind(self, value: Any) -> str:
        if self._next >= len(self._names):
            self.wrong = True
            return "_tq_none"
        name = self._names[self._next]
        self._next += 1
        if name in self._bound and self._bound[name] is not value:
            self.wrong = True
        self._bound[name] = value
        return name

    def left(self) -> bool:
        return self._next != len(self._names)


def _indices(items: list[Any]) -> bool:
    """Whether every item is an int (not a bool) and none is negative (in C: a table lists hundreds)."""
    return not items or set(map(type, items)) == {int} and min(items) >= 0


class Checked(dict[str, Any]):
    """A replay table `check` found to be as `table` writes it (`replayed` does not check it again)."""


def check(found: Any) -> dict[str, Any] | None:
    """A stored replay table as `table` writes it, as a `Checked` copy, else None (a damaged or foreign one: not
    used)."""
    if type(found) is Checked:
        return found
    if not isinstance(found, dict) or not isinstance(found.get("outline"), str):
        return None
    call, rerun, binds, writes = found.get("call"), found.get("rerun"), found.get("binds"), found.get("writer")
    if not (isinstance(call, list) and _indices(call) and isinstance(binds, dict)
            and isinstance(rerun, list) and isinstance(writes, list) and all(isinstance(w, str) for w in writes)):
        return None
    for entry in rerun:
        if not (isinstance(entry, list) and len(entry) == 2 and type(entry[0]) is int and 0 <= entry[0] < len(call)
                and isinstance(entry[1], list) and all(isinstance(n, str) and n.isidentifier() for n in entry[1])):
            return None
    return Checked(found)  # the names and recipes of `binds` are checked where they are rebuilt (`_rebuilt_all`)


LOADED_DIGEST = loaded_code_digest(sys._getframe(0).f_code)  # this module's code as the process loaded it
