"""Identity of traced code that has no source file to read: frozen standard-library modules (CC-14, CC-22).

Python 3.11+ ships parts of the standard library frozen (`co_filename == "<frozen _collections_abc>"`), so the
traced-code check cannot read their lines. Such code is identified by what it is instead: its module and qualified
name (importable in another process) and `guard_values.code_digest` of the code object (bytecode, names, constants,
nested code; deterministic in every process, no hash seed, id or address). A warm start imports the module, finds
the function by its qualified name and compares the digest: a different Python build, or a module that changed,
makes the file stale. No Dynamo import on either side.
"""
from __future__ import annotations

import importlib
import inspect
import re
import types
from typing import Any

from torchair_ref.inference.guard_values import code_digest

_FROZEN = re.compile(r"^<frozen ([A-Za-z_][\w.]*)>$")


def identify(code: types.CodeType) -> tuple[str, str, str] | None:
    """CC-14: (file marker, qualified name, digest) for code of a frozen module that a warm start can find again by
    module and qualified name; None for any other code."""
    match = _FROZEN.match(code.co_filename)
    qualname = getattr(code, "co_qualname", code.co_name)
    if match is None:
        return None
    if "<" in qualname:  # a closure, found again through the module-level object holding it (os.environ.encodekey)
        qualname = _held_at(match.group(1), code) or qualname
        if "<" in qualname:
            return None
    live = _find(match.group(1), qualname)
    if live is None or live is not code:
        return None
    return code.co_filename, qualname, "code:" + code_digest(code)


def is_marker(file: str) -> bool:
    """Whether a recorded file is a frozen-module marker this module identifies."""
    return _FROZEN.match(file) is not None


def changed(file: str, qualname: str, recorded: str) -> bool:
    """CC-14: whether the live function `qualname` of the frozen module named by `file` is gone or differs."""
    match = _FROZEN.match(file)
    live = _find(match.group(1), qualname) if match else None
    return live is None or "code:" + code_digest(live) != recorded


def _find(module_name: str, qualname: str) -> types.CodeType | None:
    try:
        value: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            value = inspect.getattr_static(value, part)
    except (ImportError, AttributeError):
        return None
    value = getattr(value, "__func__", value)
    value = getattr(value, "fget", value)  # a property's getter
    code = getattr(value, "__code__", None)
    return code if isinstance(code, types.CodeType) else None


def _held_at(module_name: str, code: types.CodeType) -> str | None:
    """`name.attr` of a function with `code` held in the instance dict of a module-level object, else None."""
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    for name, value in sorted(vars(module).items()):
        held = getattr(value, "__dict__", None)
        if isinstance(value, (type, types.ModuleType)) or not isinstance(held, dict):
            continue
        for attr, item in sorted(held.items()):
            if getattr(item, "__code__", None) is code:
                return f"{name}.{attr}"
    return None
