"""Code that has no source file because Python generated it for a class: dataclass and namedtuple methods (CC-18).

A method that returns a dataclass (HuggingFace-style `ModelOutput`s) or a namedtuple makes Dynamo trace the class's
generated `__init__` or `__new__`, whose code comes from `exec` (`<string>`), so the traced-code check cannot read
its lines. What generates that code is the class's fields, so it is identified instead by its class (module and
qualified name, importable in another process) and a digest of the fields and of the generated code itself; a warm
start resolves the class again and compares the digest. No Dynamo import on either side.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import types
from typing import Any, cast

from torchair_ref import _refs

#: what a record's entry names as its "file" for generated code, by the kind of class that generated it
MARKERS = {"dataclass": "<dataclass>", "namedtuple": "<namedtuple>"}


def identify(code: types.CodeType) -> tuple[str, str, str] | None:
    """CC-18: (marker, "module:Class.method", digest) for a method Python generated for a dataclass or namedtuple
    that can be imported by name (the class that made it, or a subclass that inherits it, as in
    `class Pair(namedtuple("Pair", ...))`); None for any other code. Walks the live classes (cold path only, tens of
    ms)."""
    classes = _classes()
    for owner in classes:
        if _kind(owner) is None:
            continue
        for name, value in vars(owner).items():
            if _code(value) is code:
                for cls in [owner] + [c for c in classes if issubclass(c, owner) and c is not owner]:
                    if _code(getattr(cls, name, None)) is code and _importable(cls):
                        named = f"{cls.__module__}:{cls.__qualname__}.{name}"
                        return MARKERS[_kind(cls) or ""], named, digest(cls, name)
                return None  # made inside a function: a warm start could not find the class again
    return None


def changed(marker: str, qualname: str, recorded: str) -> bool:
    """CC-14: whether the live class named `module:Class.method` no longer generates what was recorded."""
    module, _, path = qualname.partition(":")
    class_path, _, name = path.rpartition(".")
    try:
        cls = _refs.resolve({"module": module, "qualname": class_path})
    except Exception:  # noqa: BLE001 - a class that is gone or unimportable: the cache is stale, never a crash
        return True
    return not isinstance(cls, type) or MARKERS.get(_kind(cls) or "") != marker or (
        _code(getattr(cls, name, None)) is None or digest(cls, name) != recorded)


def digest(cls: type, name: str) -> str:
    """SHA-256 of the class's fields (names, flags, plain defaults) and of its generated method's code."""
    generated: Any = cls  # a dataclass or a namedtuple (`_kind`): its fields are read off the class
    if _kind(cls) == "dataclass":
        fields: Any = [[f.name, f.init, bool(getattr(f, "kw_only", False)), _plain(f.default),
                        f.default_factory is not dataclasses.MISSING] for f in generated.__dataclass_fields__.values()]
    else:
        fields = [list(generated._fields), {k: _plain(v) for k, v in generated._field_defaults.items()}]
    code = cast(types.CodeType, _code(getattr(cls, name)))  # both callers check that the method has code
    described = [fields, code.co_code.hex(), list(code.co_names), list(code.co_varnames),
                 [_plain(c) for c in code.co_consts]]
    return hashlib.sha256(json.dumps(described).encode()).hexdigest()


def _kind(cls: type) -> str | None:
    if dataclasses.is_dataclass(cls):
        return "dataclass"
    if issubclass(cls, tuple) and hasattr(cls, "_fields") and hasattr(cls, "_field_defaults"):
        return "namedtuple"
    return None


def _code(value: Any) -> types.CodeType | None:
    """The code of a function, or of the function a static/class method or bound method wraps; through
    `functools.wraps` wrappers (`__wrapped__`, as `transformers`' `ModelOutput` wraps a dataclass `__init__`), the
    innermost function's, which is the generated one."""
    func = getattr(value, "__func__", value)
    for _ in range(16):  # a bounded walk: a `__wrapped__` cycle must not hang a compile
        inner = getattr(func, "__wrapped__", None) if isinstance(func, types.FunctionType) else None
        if inner is None:
            break
        func = getattr(inner, "__func__", inner)
    return getattr(func, "__code__", None)


def _importable(cls: type) -> bool:
    try:
        _refs.describe(cls)
    except _refs.UnreferenceableError:
        return False
    return True


def _plain(value: Any) -> Any:
    """A default or constant as text that is the same in every process (never an address)."""
    if value is dataclasses.MISSING:
        return "MISSING"
    if value is None or type(value) in (bool, int, float, str):
        return repr(value)
    return f"<{type(value).__module__}.{type(value).__qualname__}>"


def _classes() -> list[type]:
    found: dict[type, None] = {}
    pending = [object]
    while pending:
        cls = pending.pop()
        for sub in type.__subclasses__(cls):
            if sub not in found:
                found[sub] = None
                pending.append(sub)
    return list(found)
