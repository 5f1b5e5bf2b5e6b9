"""References to importable objects, written as data instead of pickles.

A cache names the modules, functions and classes its code needs (`{"module": "torch"}`,
`{"module": "torch", "qualname": "device"}`); loading imports them by name and never unpickles anything.
"""
from __future__ import annotations

import importlib
import math
import types
from typing import Any

from torchair_ref.errors import TorchairRefError


class UnreferenceableError(TorchairRefError, ValueError):
    """An object that cannot be named by module and qualified name (so it cannot be cached)."""


def describe(obj: Any) -> dict[str, str]:
    """Name `obj` so that `resolve` finds the very same object in another process."""
    if isinstance(obj, types.ModuleType):
        return {"module": obj.__name__}
    if isinstance(obj, float) and (math.isinf(obj) or math.isnan(obj)):
        return {"float": repr(obj)}
    if _namedtuple_scope(obj):
        # The globals of the `__new__` that collections.namedtuple generates (Dynamo's guards read them): the same
        # three entries for every namedtuple, so named by the one that differs.
        return {"namedtuple_scope": obj["__name__"]}
    if isinstance(obj, types.MethodType) and isinstance(obj.__self__, type):
        # A class method bound to its class (Dynamo rebuilds a namedtuple with `Pair._make`): each attribute read
        # makes a new bound method, so it is named through its class and compared by equality.
        ref = describe(obj.__self__)
        ref = {**ref, "qualname": f"{ref['qualname']}.{obj.__name__}"}
        if resolve(ref) != obj:
            raise UnreferenceableError(f"{ref['module']}.{ref['qualname']} is not {obj!r}")
        return ref
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if isinstance(obj, types.BuiltinFunctionType) and module is None:
        module = "builtins"
    if not module or not qualname or "<" in qualname:
        raise UnreferenceableError(f"{obj!r} has no importable name (module={module!r}, qualname={qualname!r})")
    if module == "builtins" and not hasattr(__import__("builtins"), qualname) and getattr(types, qualname, None) is obj:
        module = "types"  # builtin types without a builtins name (NoneType, FunctionType, ...) live in `types`
    ref = {"module": module, "qualname": qualname}
    try:
        found = resolve(ref)
    except Exception as exc:
        raise UnreferenceableError(f"{obj!r} is not reachable as {module}.{qualname}: {exc}") from exc
    if found is not obj:
        raise UnreferenceableError(f"{module}.{qualname} is not the same object as {obj!r}")
    return ref


def _namedtuple_scope(obj: Any) -> bool:
    return (type(obj) is dict and obj.keys() == {"_tuple_new", "__builtins__", "__name__"}
            and obj["_tuple_new"] is tuple.__new__ and obj["__builtins__"] == {}
            and isinstance(obj["__name__"], str) and obj["__name__"].startswith("namedtuple_"))


def resolve(ref: dict[str, str]) -> Any:
    """Import what `describe` named."""
    if "float" in ref:
        return float(ref["float"])
    if "namedtuple_scope" in ref:
        scope = {"_tuple_new": tuple.__new__, "__builtins__": {}, "__name__": ref["namedtuple_scope"]}
        if not _namedtuple_scope(scope):
            raise ValueError(f"not the scope of a namedtuple's __new__: {ref!r}")
        return scope
    obj: Any = importlib.import_module(ref["module"])
    for part in ref.get("qualname", "").split(".") if ref.get("qualname") else ():
        obj = getattr(obj, part)
    return obj
