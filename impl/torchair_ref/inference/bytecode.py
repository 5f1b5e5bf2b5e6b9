"""Dynamo's transformed bytecode as cache data (SPEC CC-7, CC-14, CC-18).

With `fullgraph=True` Dynamo turns the cached method into one code object that reads every graph input from the
live arguments, `self`, closures and module globals (so tensors there are rebound on a warm start), calls the
compiled graph, and rebuilds the method's return value. We keep that code object (`marshal`, never pickle) and the
globals it reads that Dynamo injected, each written as data: the compiled graph, or an importable module/object.

A warm start binds the code to the live method's globals, defaults and closure: no tracing. The guards Dynamo built
at the cold trace are not here: the record carries them as checks that need no Dynamo, run before this code (CC-21).
"""
from __future__ import annotations

import base64
import dis
import marshal
import re
import sys
import types
from collections.abc import Callable, Iterable
from typing import Any

import torch

from torchair_ref import _refs, _torch
from torchair_ref.errors import UncacheableError

_GRAPH = {"graph": "compiled"}
#: how a record names Dynamo's utils module, whose helpers a warm start serves from `_DYNAMO_HOOKS`
_DYNAMO_UTILS = {"module": _torch.DYNAMO_UTILS}


def transformed_code(code: types.CodeType) -> types.CodeType:
    """The code object Dynamo produced for `code` (exactly one, since a cached function is traced once)."""
    entries = _torch.cache_entries(code)
    if len(entries) != 1:
        raise UncacheableError(f"Dynamo holds {len(entries)} compiled versions of {code.co_name}, expected 1")
    transformed: types.CodeType = entries[0].code
    return transformed


def injected_globals(code: types.CodeType, module_globals: dict[str, Any], also: Iterable[str] = ()
                     ) -> dict[str, dict[str, str]]:
    """Describe the globals Dynamo injected for `code` as data (`_refs`), the compiled graph as `{"graph": ...}`;
    `also`: more names to describe when Dynamo injected them (those its guards read, CC-21)."""
    stores = _global_stores(code)
    if stores:
        raise UncacheableError(f"the traced code assigns the module globals {sorted(stores)}")
    refs: dict[str, dict[str, str]] = {}
    for name in sorted(_all_names(code) | set(also)):
        if name.startswith(_torch.RESUME_AT):
            raise UncacheableError(f"the traced code continues in {name} (a graph break), which cannot be cached")
        if not is_injected_global(name) or name not in module_globals:
            continue
        if name.startswith(_torch.COMPILED_FN):
            refs[name] = dict(_GRAPH)
        elif name.startswith(_torch.BUILTINS_DICT):
            refs[name] = {"builtins": "dict"}
        else:
            try:
                refs[name] = _refs.describe(module_globals[name])
            except _refs.UnreferenceableError as exc:
                raise UncacheableError(f"the traced code reads {name}: {exc}") from exc
            if refs[name] == _DYNAMO_UTILS and not _attributes_read(code, name) <= _HOOK_NAMES:
                refs[name]["stand_in"] = "no"
    graphs = [n for n, r in refs.items() if r == _GRAPH]
    if len(graphs) != 1:
        raise UncacheableError(f"the traced code calls {len(graphs)} compiled graphs, expected exactly 1")
    return refs


def is_injected_global(name: str) -> bool:
    """Whether Dynamo injected the global `name` into the traced function's module (pure): one of its prefixes, or
    a name after an object's address (`_torch.ADDRESS_GLOBAL`)."""
    return name.startswith(_torch.INJECTED_PREFIXES) or re.fullmatch(_torch.ADDRESS_GLOBAL, name) is not None


def encode(code: types.CodeType) -> dict[str, Any]:
    """The code as data: marshal bytes (base64), with constants marshal cannot write kept aside as data."""
    constants: list[dict[str, Any]] = []
    portable = _set_aside_constants(code, (), constants)
    try:
        data = marshal.dumps(portable)
    except ValueError as exc:
        raise UncacheableError(f"the traced code holds a constant that cannot be written: {exc}") from exc
    return {"marshal": base64.b64encode(data).decode("ascii"), "constants": constants}


def decode(encoded: dict[str, Any]) -> types.CodeType:
    code = marshal.loads(base64.b64decode(encoded["marshal"].encode("ascii"), validate=True))
    if not isinstance(code, types.CodeType):
        raise ValueError(f"cached bytecode is a {type(code).__name__}, not a code object")
    for entry in encoded["constants"]:
        code = _put_back(code, list(entry["at"]), entry["index"], _constant_from_data(entry["value"]))
    return code


def _set_aside_constants(code: types.CodeType, at: tuple[int, ...], out: list[dict[str, Any]]) -> types.CodeType:
    consts = list(code.co_consts)
    for i, const in enumerate(consts):
        if isinstance(const, types.CodeType):
            consts[i] = _set_aside_constants(const, at + (i,), out)
            continue
        try:
            marshal.dumps(const)
        except ValueError:
            out.append({"at": list(at), "index": i, "value": _constant_as_data(const)})
            consts[i] = None
    return code.replace(co_consts=tuple(consts))


def _constant_as_data(const: Any) -> dict[str, Any]:
    if isinstance(const, tuple) and type(const) is tuple:
        return {"tuple": [_constant_as_data(item) for item in const]}
    try:
        return {"marshal": base64.b64encode(marshal.dumps(const)).decode("ascii")}
    except ValueError:
        pass
    if isinstance(const, torch.Size):
        return {"size": list(const)}
    if isinstance(const, torch.dtype):
        return {"dtype": str(const).removeprefix("torch.")}
    if isinstance(const, torch.device):
        return {"device": str(const)}
    try:
        return {"ref": _refs.describe(const)}
    except _refs.UnreferenceableError as exc:
        raise UncacheableError(f"the traced code holds the constant {const!r}, which cannot be cached") from exc


def _constant_from_data(value: dict[str, Any]) -> Any:
    if "tuple" in value:
        return tuple(_constant_from_data(item) for item in value["tuple"])
    if "marshal" in value:
        return marshal.loads(base64.b64decode(value["marshal"].encode("ascii"), validate=True))
    if "size" in value:
        return torch.Size(value["size"])
    if "dtype" in value:
        dtype = getattr(torch, value["dtype"])
        if not isinstance(dtype, torch.dtype):
            raise ValueError(f"{value['dtype']!r} is not a torch dtype")
        return dtype
    if "device" in value:
        return torch.device(value["device"])
    return _refs.resolve(value["ref"])


def _put_back(code: types.CodeType, at: list[int], index: int, value: Any) -> types.CodeType:
    consts = list(code.co_consts)
    position = at[0] if at else index
    if type(position) is not int or not 0 <= position < len(consts):
        raise ValueError(f"constant position {position!r} is outside {code.co_name}'s {len(consts)} constants")
    if at:
        if not isinstance(consts[position], types.CodeType):
            raise ValueError(f"constant {position} of {code.co_name} is not a code object")
        consts[position] = _put_back(consts[position], at[1:], index, value)
    elif consts[position] is not None:
        raise ValueError(f"constant {position} of {code.co_name} was not set aside (it is {consts[position]!r})")
    else:
        consts[position] = value
    return code.replace(co_consts=tuple(consts))


def rebuild(
    code: types.CodeType, refs: dict[str, dict[str, str]], graph: Callable[..., Any], func: types.FunctionType
) -> tuple[types.FunctionType, str]:
    """CC-14: a function running `code` with `func`'s globals, defaults and closure, and `graph` as its graph.

    The names Dynamo injected live in a scope of the function's own (`ModuleView`), which reads every other name
    from the live module: nothing is added to the user's module. Returns the function and the name under which it
    finds `graph` in `function.__globals__` (the caller may swap the graph there).
    """
    if code.co_freevars != func.__code__.co_freevars:
        raise ValueError(
            f"cached bytecode closes over {code.co_freevars}, the live method over {func.__code__.co_freevars}"
        )
    stores = _global_stores(code)
    if stores:
        raise ValueError(f"cached bytecode assigns the module globals {sorted(stores)}")
    scope = ModuleView(func.__globals__)
    renamed = {}
    graph_name = ""
    for i, (name, ref) in enumerate(sorted(refs.items())):
        new_name = f"__torchair_ref_{i}"
        if ref == _GRAPH:
            scope[new_name] = graph
            graph_name = new_name
        else:
            scope[new_name] = _resolve(ref)
        renamed[name] = new_name
    code = _rename(code, renamed)
    rebuilt = types.FunctionType(code, scope, func.__name__, func.__defaults__, func.__closure__)
    rebuilt.__kwdefaults__ = func.__kwdefaults__
    rebuilt.__module__ = func.__module__
    rebuilt.__qualname__ = func.__qualname__
    return rebuilt, graph_name


class ModuleView(dict[str, Any]):
    """A function's globals: its own names, then (on a miss) the live module's, so a rebound global is seen."""

    __slots__ = ("module_globals",)

    def __init__(self, module_globals: dict[str, Any]) -> None:
        super().__init__(__builtins__=module_globals.get("__builtins__", __builtins__))
        self.module_globals = module_globals

    def __missing__(self, name: str) -> Any:
        return self.module_globals[name]


def _global_stores(code: types.CodeType) -> set[str]:
    """Names the code (nested code included) assigns or deletes as globals."""
    found = {i.argval for i in dis.get_instructions(code) if i.opname in ("STORE_GLOBAL", "DELETE_GLOBAL")}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _global_stores(const)
    return found


def injected_objects(refs: dict[str, dict[str, str]]) -> dict[str, Any]:
    """The objects Dynamo injected as globals, by their names in the traced code (the graph left out)."""
    return {name: _resolve(ref) for name, ref in refs.items() if ref != _GRAPH}


def _resolve(ref: dict[str, str]) -> Any:
    if ref.get("builtins") == "dict":
        import builtins

        return builtins.__dict__
    if ref == _DYNAMO_UTILS and _torch.DYNAMO_UTILS not in sys.modules:
        return _DYNAMO_HOOKS  # importing Dynamo costs more than a second; the code only calls these helpers
    return _refs.resolve(ref)


_DYNAMO_HOOKS = _torch.dynamo_utils_stand_in()
_HOOK_NAMES = set(vars(_DYNAMO_HOOKS))


def _attributes_read(code: types.CodeType, global_name: str) -> set[str]:
    """Attributes the code reads right after loading the global `global_name` (nested code included)."""
    found: set[str] = set()
    previous = None
    for instruction in dis.get_instructions(code):
        if previous is not None and previous.opname == "LOAD_GLOBAL" and previous.argval == global_name:
            if instruction.opname in ("LOAD_ATTR", "LOAD_METHOD"):
                found.add(instruction.argval)
            else:
                found.add("<not an attribute read>")
        previous = instruction
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _attributes_read(const, global_name)
    return found


def _all_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _all_names(const)
    return names


def _rename(code: types.CodeType, mapping: dict[str, str]) -> types.CodeType:
    consts = tuple(_rename(c, mapping) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    names = tuple(mapping.get(n, n) for n in code.co_names)
    return code.replace(co_names=names, co_consts=consts)
