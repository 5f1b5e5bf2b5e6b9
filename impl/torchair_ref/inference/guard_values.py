"""What the objects Dynamo guarded are, in terms that hold in another process (SPEC CC-21, CC-22).

Dynamo guards by id (`TYPE_MATCH`, `ID_MATCH`); ids differ per process, so a warm start compares names, and for
code a digest of the code object itself (bytecode, names, constants, nested code), computed so that it does not
depend on the process: set constants are hashed in sorted order, never in their hash-seeded iteration order.
"""
from __future__ import annotations

import contextlib
import contextvars
import enum
import hashlib
import marshal
import sys
import types
from collections.abc import Container, Iterator, Sequence
from typing import Any

import torch

from torchair_ref import _torch
from torchair_ref.errors import TorchairRefError

#: torch's operator classes, bound once (`describe_object` may run per call)
_OP_TYPES = (_torch.op_overload(), _torch.op_overload_packet())


class UnknownGuard(TorchairRefError, ValueError):
    """A guard the translator does not understand (the message names its kind and text): do not cache."""


#: id(code) -> (code, its digest): a code object is immutable, so its digest is computed once per process; the
#: entry keeps the object alive, so its id is never another object's while the entry exists. Emptied when it holds
#: `_CODE_DIGESTS_MAX` entries (a process that makes code objects without end, as per-batch-size proxies do, keeps
#: a bounded number alive; a transformers model's warm start digests a few hundred)
_CODE_DIGESTS: dict[int, tuple[types.CodeType, str]] = {}
_CODE_DIGESTS_MAX = 16384


def code_digest(code: types.CodeType) -> str:
    """CC-14/CC-22: a digest of a code object (bytecode, names, constants, nested code), the same in every process:
    set constants are hashed in a sorted order, never through their hash-seeded iteration order."""
    known = _CODE_DIGESTS.get(id(code))
    if known is not None and known[0] is code:
        return known[1]
    result = _code_digest(code)
    if len(_CODE_DIGESTS) >= _CODE_DIGESTS_MAX:
        _CODE_DIGESTS.clear()
    _CODE_DIGESTS[id(code)] = (code, result)
    return result


def _code_digest(code: types.CodeType) -> str:
    # One `marshal` text of the parts that decide what the code does, written at format version 2: that version
    # writes no references (from version 3 on, an object the process holds more than once is written differently)
    # and no interning, so equal values give equal bytes in every process. Scalars and tuples of them are written
    # as they are; any other constant as its `_stable` text in a list, a type no code constant has (nested code by
    # its own digest, sets in sorted order without relying on `marshal` to sort them). This runs for each method
    # a warm start's class checks name (`traced_members`) and each function an ID_MATCH names: about 7 us each at
    # its first touch.
    consts = code.co_consts
    if not _SCALARS.issuperset(map(type, consts)):
        consts = tuple(map(_marshallable, consts))
    parts = (code.co_code, getattr(code, "co_exceptiontable", b""), code.co_names, code.co_varnames,
             code.co_freevars, code.co_cellvars, code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount,
             code.co_flags, consts)
    return hashlib.sha256(marshal.dumps(parts, 2)).hexdigest()


_SCALARS = frozenset({type(None), int, float, complex, bool, str, bytes, type(Ellipsis)})


def _marshallable(value: Any) -> Any:
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is tuple:  # most often a call's keyword names: all scalars, written as they are
        return value if _SCALARS.issuperset(map(type, value)) else tuple(map(_marshallable, value))
    return [_stable(value)]


def _stable(value: Any) -> str:
    """A text for a constant that does not depend on the process (no ids, no set order)."""
    kind = type(value)
    if kind is int:
        return "int:" + hex(value)  # repr stops at 4300 digits
    if kind in _SCALARS:
        return kind.__name__ + ":" + repr(value)
    if isinstance(value, types.CodeType):
        return "code:" + code_digest(value)
    if isinstance(value, (frozenset, set)):
        return "{" + ",".join(sorted(_stable(v) for v in value)) + "}"
    if isinstance(value, tuple):
        return "(" + ",".join(_stable(v) for v in value) + ")"
    return "other:" + type(value).__qualname__


def qualified_name(obj: Any) -> str:
    qualname = getattr(obj, "__qualname__", _NO_NAME)  # `__name__` only read where it is wanted
    if qualname is _NO_NAME:
        qualname = getattr(obj, "__name__", None)
    return f"{getattr(obj, '__module__', None)}.{qualname}"


_NO_NAME = object()


def _in_torch(cls: type) -> bool:
    module = getattr(cls, "__module__", "") or ""
    return module == "builtins" or module == "torch" or module.startswith("torch.")


def class_digest(cls: type, members: Sequence[str] | None = None) -> str | None:
    """A digest of a class and its bases outside torch, None for a class of torch or builtins (the torch version
    covers those). Each class of the MRO gives its qualified name, its members' names in order and their plain
    constants, and the code digests of its methods (properties, static and class methods): of all of them, or
    with `members`, of those named there (`traced_members`: the ones Dynamo traced, CC-21 (f)). Within
    `digests_kept`, each is computed once."""
    if _in_torch(cls):
        return None
    if members is not None:
        members = tuple(members)  # a record's JSON list
    kept = _kept()
    if kept is not None and (id(cls), members) in kept:
        known: str = kept[id(cls), members][1]
        return known
    parts: list[Any] = []
    for klass in cls.__mro__:
        if not _in_torch(klass):
            parts.append(_own_parts(klass, kept))
            if members is None:
                parts.extend((name, [code_digest(code) for code in codes]) for name, codes in _methods(klass).items())
                continue
            own = vars(klass)
            for name in members:  # only these members' code is read (a transformers base has hundreds)
                value = own.get(name)
                if value is not None:  # most members are another class's: skip `_codes_of` for them
                    codes = _codes_of(value)
                    if codes:
                        parts.append((name, [code_digest(code) for code in codes]))
    digest = hashlib.sha256(marshal.dumps(parts, 2)).hexdigest()
    if kept is not None:
        kept[id(cls), members] = (cls, digest)
    return digest


def traced_members(cls: type, traced: Container[types.CodeType]) -> tuple[str, ...]:
    """CC-21 (f): the members of `cls` and its bases outside torch whose code a cold trace may have run: those
    holding code Dynamo `traced`, and those it may have run without tracing them: every special method (`__eq__`,
    `__hash__`, `__subclasshook__`, ... run by Python itself) and the methods marked `assume_constant_result`."""
    found = set()
    for klass in cls.__mro__:
        if not _in_torch(klass):
            members = vars(klass)
            for name, codes in _methods(klass).items():
                if (name[:2] == name[-2:] == "__" or any(code in traced for code in codes)
                        or getattr(_function(members[name]), "_dynamo_marked_constant", False)):
                    found.add(name)
    return tuple(sorted(found))


def _own_parts(klass: type, kept: _Kept | None) -> str:
    """What `class_digest` reads of one class of the MRO besides its methods' code, as its own digest: its name, its
    members' names and plain constants, in name order (one digest per class: the classes of a transformers model
    share their bases, and each base's list of names was written again into each class's digest)."""
    if kept is not None and ~id(klass) in kept:
        known: str = kept[~id(klass)][1]
        return known
    # In name order (names are unique: values are never compared), a str subclass as a name (`type()` keeps one) as
    # the str it holds, which marshal writes; comprehensions, not a loop: PreTrainedModel alone has about 200 members.
    static: list[Any] = [qualified_name(klass)]
    own = vars(klass)
    names = sorted(own)  # the names alone: sorting (name, value) pairs was a fifth of it
    if set(map(type, names)) == {str}:  # a member gone since (another thread) reads as None: a digest that differs
        static += [(name, "=", value) if (value := own.get(name)) is None or type(value) in _PLAIN else name
                   for name in names]
    else:
        named = [(name if type(name) is str else str.__str__(name), value) for name, value in sorted(own.items())]
        static += [(name, "=", value) if value is None or type(value) in _PLAIN else name for name, value in named]
    digest = hashlib.sha256(marshal.dumps(static, 2)).hexdigest()
    if kept is not None:
        kept[~id(klass)] = (klass, digest)
    return digest


def _methods(klass: type) -> dict[str, list[types.CodeType]]:
    """The code of each member of `klass` that is a method (function, property, static or class method), by name, in
    name order."""
    members = vars(klass)
    found: dict[str, list[types.CodeType]] = {}
    for name in sorted(members):
        codes = _codes_of(members[name])
        if codes:
            found[str.__str__(name)] = codes
    return found


class _Kept(dict[Any, tuple[Any, Any]]):
    """`digests_kept`'s memory: (id(class), members) -> (class, digest), ~id(class) -> (class, the digest of its own
    parts), and ("name", qualified name) -> (class, class) (`type_named`); the entries keep the classes alive, so an
    id is never another class's while they exist. Emptied and closed when its block ends: a context copied inside
    the block (an asyncio task, `contextvars.copy_context`, a thread that inherits its parent's context) holds it on,
    and must then digest every class afresh."""

    open = True


_KEPT: contextvars.ContextVar[_Kept | None] = contextvars.ContextVar("torchair_ref_class_digests", default=None)


def _kept() -> _Kept | None:
    kept = _KEPT.get()
    return kept if kept is not None and kept.open else None


@contextlib.contextmanager
def digests_kept() -> Iterator[None]:
    """CC-14/CC-21: within the block, in this context, each class is digested once: one warm start's checks name
    the same classes again and again (GPT-2's 136 class guards name 38 classes, and each transformers model class
    shares the ~290 methods of its bases). The block is one warm start's check of one variant (its record, its
    guards written and evaluated once against the first call) and the load of its graph. A class changed inside the
    block, by another thread or by code a guard's read runs (a module's `__getattr__`, a property), keeps the digest
    of its first use there: the check sees the classes as they were when it began, as Dynamo's own TYPE_MATCH,
    which compares only the class's id, would."""
    kept = _Kept()
    token = _KEPT.set(kept)
    try:
        yield
    finally:
        kept.open = False
        kept.clear()
        _KEPT.reset(token)


def loaded_code_digest(code: types.CodeType) -> str:
    """A digest of a module's code as this process loaded it: the code object of its body, holding every function
    and class body of the module (`marshal` format 2: no references, so equal code gives equal bytes in every
    process; Python 3.11 writes a set constant in a fixed order, 3.10 in its hash order: the modules it names hold
    none). Taken in the module's own body at its import, it names what the module runs, whether that came from its
    source, a `.pyc` (even one whose source differs) or an archive, and not a file changed afterwards. Its file's
    path and line numbers are part of it."""
    return "code:" + hashlib.sha256(marshal.dumps(code, 2)).hexdigest()


def _function(value: Any) -> Any:
    return value.__func__ if isinstance(value, (staticmethod, classmethod)) else value


_PLAIN = frozenset({int, float, bool, str})


def _codes_of(value: Any) -> list[types.CodeType]:
    if type(value) is types.FunctionType:  # the common case first
        return [value.__code__]
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    if isinstance(value, property):
        return [f.__code__ for f in (value.fget, value.fset, value.fdel) if isinstance(f, types.FunctionType)]
    if isinstance(value, types.FunctionType):
        return [value.__code__]
    return []


def describe_class(cls: type, traced: Container[types.CodeType] | None = None,
                   members: Sequence[str] | None = None) -> dict[str, Any]:
    """A class by name and `class_digest`: of the members whose code is in `traced` (the cold trace's code), or of
    the given `members` (the described class's, to compare with it), or of all (neither given)."""
    if traced is not None:
        members = traced_members(cls, traced)
    return {"name": qualified_name(cls), "digest": class_digest(cls, members),
            "members": None if members is None else list(members)}


def describe_object(obj: Any, traced: Container[types.CodeType] | None = None,
                    like: dict[str, Any] | None = None) -> dict[str, Any]:
    """What an object Dynamo guarded by id is, in terms that hold in another process; a class by the members
    `describe_class` digests for `traced` or, to compare with a description `like`, for the members named there."""
    if obj is None or obj is True or obj is False:
        return {"constant": obj}
    if isinstance(obj, types.ModuleType):
        return {"module": obj.__name__}
    if isinstance(obj, types.CodeType):
        return {"code": code_digest(obj)}
    if isinstance(obj, types.FunctionType):
        return {"function": qualified_name(obj), "code": code_digest(obj.__code__)}
    if isinstance(obj, type):
        named = like.get("class") if like is not None else None
        return {"class": describe_class(obj, traced, named.get("members") if isinstance(named, dict) else None)}
    if isinstance(obj, (types.BuiltinFunctionType, types.BuiltinMethodType)) or callable(obj) and _is_torch_op(obj):
        return {"builtin": qualified_name(obj), "type": qualified_name(type(obj))}
    if isinstance(obj, (torch.dtype, torch.device)):
        return {"value": str(obj), "type": qualified_name(type(obj))}
    if isinstance(obj, enum.Enum):
        return {"enum": qualified_name(type(obj)), "member": obj.name}
    raise UnknownGuard(f"an object of type {qualified_name(type(obj))} guarded by identity")


def _is_torch_op(obj: Any) -> bool:
    return isinstance(obj, _OP_TYPES)


def literal(value: Any) -> Any:
    """A JSON literal for a value Dynamo compared by equality, or UnknownGuard."""
    if value is None or type(value) in (bool, int, str) or (type(value) is float and value == value
                                                            and abs(value) != float("inf")):
        return value
    if type(value) in (tuple, list):
        return {type(value).__name__: [literal(v) for v in value]}
    raise UnknownGuard(f"a value of type {type(value).__name__} compared by equality")


def from_literal(value: Any) -> Any:
    if isinstance(value, dict):
        kind, items = next(iter(value.items()))
        return {"tuple": tuple, "list": list}[kind](from_literal(v) for v in items)
    return value


def type_named(name: str) -> type | None:
    """The class a qualified name names, importing nothing new (a class of a module not loaded is not the one).
    Within `digests_kept`, each name is looked up once (GPT-2's 116 class checks name 23 classes)."""
    kept = _kept()
    if kept is None:
        return _type_named(name)
    if ("name", name) not in kept:
        found = _type_named(name)
        kept["name", name] = (found, found)
    known: type | None = kept["name", name][1]
    return known


def _type_named(name: str) -> type | None:
    module, _, qualname = name.rpartition(".")
    while module and module not in sys.modules:
        module, _, head = module.rpartition(".")
        qualname = f"{head}.{qualname}"
    if not module or "<" in qualname:
        return None
    found: Any = sys.modules[module]  # loaded, as the loop found: read from there, not through the import machinery
    try:
        for part in qualname.split("."):
            found = getattr(found, part)
    except Exception:  # noqa: BLE001 - not reachable by name: compared by name and digest instead
        return None
    return found if isinstance(found, type) and qualified_name(found) == name else None


LOADED_DIGEST = loaded_code_digest(sys._getframe(0).f_code)  # this module's code as the process loaded it
