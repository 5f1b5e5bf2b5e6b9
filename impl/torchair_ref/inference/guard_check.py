"""Run the record's guard checks on a warm start, without Dynamo (SPEC CC-14, CC-21).

Each check is the Python boolean expression its guard kind writes (`guard_kinds`, `GuardSpec.test`), over code that
reads its sources and names bound to its constants. `first_call_failure` evaluates the checks of the module and the
code it reaches (`when == "first"`) once, on the first call, by following each source from the live module and the
function's globals. `guarded_method` wraps the warm function in a function with the method's own signature whose
body is one generated boolean expression over the arguments, the module, its globals and closure cells, run on every
call as Dynamo runs its guards (CC-21: state changed between two warm calls counts): sizes and symbolic relations,
None-ness, container lengths, values, aliasing, the classes and code reached, module attributes, hooks, and the
ambient state (PyTorch's C++ `GlobalStateGuard`, loaded through `_torch` without Dynamo). A call that fails it goes
to `on_fail` with the failing check, before any kernel runs. Only identifiers, constant keys and the validated
templates of `guard_spec` reach generated code. Reading every source, writing that code and compiling it were over
half of a transformers model's guard work, so a record keeps it compiled (`stored_code`, written by the cold
process) with its outline: the check with each read of a source as a placeholder. A warm start whose check has the
same outline binds what that code binds, in the same order, and loads it without reading a source.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import inspect
import marshal
import re
import sys
import types
import zlib
from collections.abc import Callable
from typing import Any

import torch

from torchair_ref import _torch
from torchair_ref.inference import guard_expressions, guard_spec
from torchair_ref.inference.guard_kinds import GuardSpec, UnknownGuard
from torchair_ref.inference.guard_kinds.ambient import global_state_checks  # noqa: F401 - where tests look for it
from torchair_ref.inference.guard_values import loaded_code_digest, qualified_name


def _parsed(source: str) -> tuple[tuple[str, ...], tuple[tuple[Any, ...], ...]]:
    return guard_spec.parsed_source(source)


def resolve(source: str, frame: dict[str, Any], module_globals: Any, memo: dict[str, Any] | None = None) -> Any:
    """The live object at a guard source: `L[...]` from `frame`, `G[...]` from `module_globals`."""
    if memo is not None and source in memo:
        return memo[source]
    (root, name), steps = _parsed(source)
    value = frame[name] if root == "L" else module_globals[name]
    for op, arg in steps:
        value = _step(value, op, arg)
    if memo is not None:
        memo[source] = value
    return value


def _step(value: Any, op: str, arg: Any) -> Any:
    if op == "attr":
        return getattr(value, arg)
    if op == "item":
        return dict.__getitem__(value, arg) if isinstance(value, dict) else value[arg]
    if op == "at":
        key = list(dict.keys(value))[arg]  # past a dict subclass's own __getitem__, as Dynamo reads it
        return dict.__getitem__(value, key) if isinstance(value, dict) else value[key]
    if op == "key":
        return list(dict.keys(value))[arg]
    if op == "type":
        return type(value)
    if op == "dict":
        return dict(value)
    return getattr(value, arg)()  # "call": size(), stride(), ...


def cells(function: types.FunctionType) -> dict[str, Any]:
    """The contents of the function's closure cells, by name (an empty cell is left out)."""
    found = {}
    for name, cell in zip(function.__code__.co_freevars, function.__closure__ or ()):
        try:
            found[name] = cell.cell_contents
        except ValueError:
            continue
    return found


class _Gone:
    """What a source that cannot be read holds in the generated slow path: every check that uses it fails."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(name)

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = None  # type: ignore[assignment]


class _Writer:
    """`guard_kinds.Code` for generated checks: sources read by `read` (a function of a source), constants bound in
    `namespace` under fresh names (the same object once)."""

    def __init__(self, namespace: dict[str, Any], read: Callable[[str], str]) -> None:
        self._namespace, self._read = namespace, read
        self._names: dict[int, str] = {}
        self._kept: list[Any] = []  # keeps each bound object alive, so its id is not reused while names map it

    def reading(self, read: Callable[[str], str]) -> _Writer:
        """A writer that reads sources with `read` and binds in this one's namespace, under this one's names."""
        other = _Writer(self._namespace, read)
        other._names, other._kept = self._names, self._kept
        return other

    def read(self, source: str) -> str:
        return self._read(source)

    def bind(self, value: Any) -> str:
        name = self._names.get(id(value))
        if name is None:
            name = self._names[id(value)] = f"_tq_b{len(self._names)}"
            self._namespace[name] = value
            self._kept.append(value)
        return name


def first_call_failure(specs: list[GuardSpec], module: Any, function: types.FunctionType,
                       module_globals: Any) -> str | None:
    """CC-21: the first module/code check that the live module fails, in words naming Dynamo's guard, or None."""
    frame = {function.__code__.co_varnames[0]: module, **cells(function)}
    memo: dict[str, Any] = {}
    namespace: dict[str, Any] = {"__builtins__": {}, "_tq_at": lambda s: resolve(s, frame, module_globals, memo)}
    writer = _Writer(namespace, lambda source: f"_tq_at({source!r})")
    first = [spec for spec in specs if spec.when == "first"]
    if not first:
        return None
    try:  # all of them as one expression, compiled once (a module's 28 tensors took 28 compiles); one by one below
        if eval(compile(" and ".join(f"({spec.test(writer)})" for spec in first),  # noqa: S307
                        "<torchair_ref guards>", "eval"), namespace):
            return None
    except Exception:  # noqa: BLE001, S110 - named by the one-by-one pass, which reads each source alone
        pass
    for spec in first:
        try:
            ok = eval(compile(spec.test(writer), "<torchair_ref guard>", "eval"), namespace)  # noqa: S307
        except Exception as exc:  # noqa: BLE001 - a source that is gone fails its guard
            return f"{spec.guard} failed: {spec.text} ({type(exc).__name__}: {exc})"
        if not ok:
            sources = spec.read_sources()
            found = memo.get(sources[0]) if len(sources) == 1 else None
            if isinstance(found, torch.Tensor):
                found = f"{found.dtype} on {found.device.type}, size {list(found.shape)}, stride {list(found.stride())}"
            elif spec.check in ("class", "object"):
                found = qualified_name(type(found))
            return f"{spec.guard} failed: {spec.text}" + ("" if found is None else f" (found {found!s:.200})")
    return None


def global_state_now() -> str:
    """The live global state as GLOBAL_STATE's C++ guard writes it (JSON), to name what differs (CC-23)."""
    return str(_torch.global_state_guard()().__getstate__())


class _Written:
    """CC-21: the per-call check of `specs` for `function` as generated code: its `source`, the `namespace` binding
    what it names, and what the slow path (`_tq_which`) needs to write its own code. Its `outline` is the same check
    with each read of a source left as a placeholder: what a stored check is matched by, without reading a source."""

    def __init__(self, function: types.FunctionType, specs: list[GuardSpec], namespace: dict[str, Any]) -> None:
        code = function.__code__
        self.specs = [spec for spec in specs if spec.per_call()]
        names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        positional, keyword = names[:code.co_argcount], names[code.co_argcount:]
        varargs = code.co_varnames[len(names)] if code.co_flags & inspect.CO_VARARGS else None
        varkw = code.co_varnames[len(names) + bool(varargs)] if code.co_flags & inspect.CO_VARKEYWORDS else None
        params = list(positional)
        if code.co_posonlyargcount:
            params.insert(code.co_posonlyargcount, "/")
        if varargs:
            params.append("*" + varargs)
        elif keyword:
            params.append("*")
        params += list(keyword) + (["**" + varkw] if varkw else [])
        call = list(positional) + (["*" + varargs] if varargs else []) + [f"{k}={k}" for k in keyword] + (
            ["**" + varkw] if varkw else [])
        if any(name.startswith("_tq_") for name in code.co_varnames[:len(names) + bool(varargs) + bool(varkw)]):
            raise UnknownGuard(f"a parameter of {function.__qualname__} is named like the guard's helpers")
        namespace.update({"__builtins__": {}, "_tq_GONE": _Gone(), "Exception": Exception, "_tq_list": list,
                          "_tq_dict": dict, "_tq_type": type, "_tq_proxy": types.MappingProxyType,
                          "_tq_cells": dict(zip(code.co_freevars, function.__closure__ or ()))})
        self.namespace = namespace
        self._arguments: set[str | None] = {*names, varargs, varkw}
        self.pack, self.forward = ", ".join(params), ", ".join(call)
        self.title = f"<torchair_ref guards of {function.__qualname__}>"
        self._writer = _Writer(namespace, _no_read)
        self._outlined: tuple[list[str], list[str]] | None = None
        self._written: tuple[list[str], list[str], str] | None = None

    def _outline(self) -> tuple[list[str], list[str]]:
        """Each check's text with each read of a source as a placeholder (`_tq_p{n}`), and the sources read, in that
        order: the one pass over the specs, which binds their constants (the source is written from it)."""
        if self._outlined is None:
            sources: list[str] = []

            def placeholder(source: str) -> str:
                sources.append(source)
                return f"_tq_p{len(sources) - 1}"

            writer = self._writer.reading(placeholder)
            self._outlined = [spec.test(writer) for spec in self.specs], sources
        return self._outlined

    def outline(self) -> str:
        """The SHA-256 of the outline (`_outline`), the signature and the code that writes the source from them: the
        same outline, under the same implementation, is the same source, binding the same names in the same order."""
        tests, sources = self._outline()
        parts = (_generator(), self.title, self.pack, self.forward, tests, sources)
        return hashlib.sha256(marshal.dumps(parts, 2)).hexdigest()

    def _write(self) -> tuple[list[str], list[str], str]:
        # Each placeholder replaced by the code reading its source. The fast path reads each distinct source prefix
        # once per call, into a local (`hoisted`): the checks of a deep module share most of their paths. The slow
        # path (`_tq_which`, only after a failure) runs each read and each check alone. One check per line: a
        # column past 127 takes the long form of each entry of the code's position table, which then was as large
        # as the bytecode itself (GPT-2: 39 KB of 90 KB), all decoded at every warm start.
        if self._written is None:
            outlined, sources = self._outline()
            hoisted: dict[str, str] = {}
            reads: list[str] = []
            codes = [_source_code(source, self._arguments, hoisted, reads) for source in sources]
            tests = [_PLACEHOLDER.sub(lambda m: m.group(1) or codes[int(m.group(2))], test) for test in outlined]
            source = (
                f"def guarded({self.pack}):\n"
                "    try:\n"
                + "".join(f"        {line}\n" for line in reads)
                + "        ok = (\n"
                + "".join(f"            ({test}) and\n" for test in tests)
                + "            True\n"
                "        )\n"
                "    except Exception:\n"
                "        ok = False\n"
                "    if ok:\n"
                f"        return _tq_run({self.forward})\n"
                f"    return _tq_fail(_tq_find({self.forward}), {self.forward})\n"
            )
            self._written = reads, tests, source
        return self._written

    @property
    def reads(self) -> list[str]:
        return self._write()[0]

    @property
    def tests(self) -> list[str]:
        return self._write()[1]

    @property
    def source(self) -> str:
        return self._write()[2]

    def digest(self) -> str:
        """The SHA-256 of the source: what a stored check is kept under."""
        return hashlib.sha256(self.source.encode("utf-8", "surrogatepass")).hexdigest()


#: a placeholder (group 2: its number), or a string literal as `repr` writes one (group 1), kept as it is
_PLACEHOLDER = re.compile(r"""('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")|\b_tq_p([0-9]+)\b""")


def _no_read(source: str) -> str:
    raise AssertionError(f"a source read outside a check: {source}")


def _generator() -> list[str]:
    """The digests of the code that writes a check's source from its outline, each as the process loaded it
    (`loaded_code_digest`, taken in the module's body): this module, the source reader and the expression rewriter
    (another writer: another outline)."""
    return [LOADED_DIGEST, guard_spec.LOADED_DIGEST, guard_expressions.LOADED_DIGEST]


LOADED_DIGEST = loaded_code_digest(sys._getframe(0).f_code)  # this module's code as the process loaded it


def guarded_method(function: types.FunctionType, run: Callable[..., Any], specs: list[GuardSpec],
                   on_fail: Callable[..., Any], module_globals: Any,
                   stored: Any = None) -> types.FunctionType:
    """CC-21: a function with `function`'s signature that calls `run` with its arguments when every per-call check
    holds, else `on_fail(spec, *args, **kwargs)` with the first check that fails alone, or None when every check
    holds alone (the guarded state changed while it was checked) (`on_fail` must raise or compute the call; `args`
    starts with the method's `self`). `stored` is a record's `stored_code`: used when it holds this very source."""
    written = _Written(function, specs, {"_tq_run": run, "_tq_fail": on_fail, "_tq_G": module_globals})
    namespace, checked = written.namespace, written.specs

    def which(*args: Any, **kwargs: Any) -> GuardSpec | None:
        """The first check that fails alone, or None when each holds alone: the same checks over the same bound
        objects, each read and each check in its own `try` (a read that fails leaves `_tq_GONE`, which fails what
        uses it). Its code is written at the first failure, not before."""
        if "_tq_which" not in namespace:
            each_read = "".join(f"    try:\n        {line}\n    except Exception:\n"
                                f"        {line.split(' = ', 1)[0]} = _tq_GONE\n" for line in written.reads)
            each_test = "".join(f"    try:\n        if not ({t}):\n            return {i}\n"
                                f"    except Exception:\n        return {i}\n" for i, t in enumerate(written.tests))
            exec(compile(f"def _tq_which({written.pack}):\n{each_read}{each_test}    return -1\n",  # noqa: S102
                         written.title, "exec"), namespace)
            namespace["_tq_which"].__defaults__ = function.__defaults__
            namespace["_tq_which"].__kwdefaults__ = function.__kwdefaults__
        found: int = namespace["_tq_which"](*args, **kwargs)
        return None if found < 0 else checked[found]

    namespace["_tq_find"] = which
    exec(_stored_or_compiled(written, stored), namespace)  # noqa: S102
    guarded: types.FunctionType = namespace["guarded"]
    guarded.__defaults__ = function.__defaults__
    guarded.__kwdefaults__ = function.__kwdefaults__
    guarded.__qualname__ = function.__qualname__
    return guarded


def stored_code(function: types.FunctionType, specs: list[GuardSpec]) -> dict[str, str]:
    """CC-14: the per-call check of `specs` for `function` compiled now, as a record keeps it: the SHA-256 of its
    source, its outline (`_Written.outline`: what the source is written from) and its code (marshalled,
    compressed, base64). `guarded_method` loads it for the same outline; the SHA-256 names it in `readable_cache`."""
    written = _Written(function, specs, {})
    code = compile(written.source, written.title, "exec")
    return {"sha256": written.digest(), "outline": written.outline(),
            "code": base64.b64encode(zlib.compress(marshal.dumps(code))).decode("ascii")}


def _stored_or_compiled(written: _Written, stored: Any) -> types.CodeType:
    """CC-14/CC-17: the stored code when `stored` holds code for this check (the same outline: no source is read or
    written), else the source compiled (a record without it, another check, or a value that does not decode to
    code written for this check: the check is written here as it always could be)."""
    if isinstance(stored, dict) and isinstance(stored.get("outline"), str) and stored["outline"] == written.outline():
        code = _decoded(stored.get("code"), written.title)
        if code is not None:
            return code
    return compile(written.source, written.title, "exec")


def _decoded(value: Any, title: str) -> types.CodeType | None:
    if not isinstance(value, str):
        return None
    try:
        code = marshal.loads(zlib.decompress(base64.b64decode(value, validate=True)))
    except (binascii.Error, zlib.error, ValueError, EOFError, TypeError):
        return None
    return code if isinstance(code, types.CodeType) and code.co_filename == title else None


def set_run(guarded: types.FunctionType, run: Callable[..., Any]) -> None:
    """What `guarded` (from `guarded_method`) calls from now on when its checks hold."""
    guarded.__globals__["_tq_run"] = run


def _class_dict_copy(steps: tuple[tuple[Any, ...], ...], index: int) -> bool:
    """Whether `steps[index]` is the copy in `dict(X.__dict__)[k]` (then `dict` of an `__dict__`, then a key)."""
    return (0 < index < len(steps) - 1 and steps[index][0] == "dict" and steps[index - 1] == ("attr", "__dict__")
            and steps[index + 1][0] == "item")


def _source_code(source: str, params: set[str | None], hoisted: dict[str, str] | None = None,
                 reads: list[str] | None = None) -> str:
    """Python code reading a per-call source from the wrapper's parameters (names and keys only); given `hoisted`
    and `reads`, each step is read once into a local (`_tq_s{n} = ...` appended to `reads`) and reused."""
    (root, name), steps = _parsed(source)
    if root == "L":
        code = name if name in params else f"_tq_cells[{name!r}].cell_contents"
    else:
        code = f"_tq_G[{name!r}]"
    copied = -1
    for index, (op, arg) in enumerate(steps):
        if copied >= 0 and index == copied + 1:
            continue  # the key read with the copy before it
        if hoisted is not None and reads is not None and code not in params:
            if code not in hoisted:
                hoisted[code] = f"_tq_s{len(hoisted)}"
                reads.append(f"{hoisted[code]} = {code}")
            code = hoisted[code]
        if op == "dict" and _class_dict_copy(steps, index) and code.isidentifier():
            # `dict(C.__dict__)[k]`, Dynamo's form for a class attribute: a class's `__dict__` is a read-only view
            # of its dict, whose `[k]` is the copy's; copying it was a fifth of a transformers model's check
            key = steps[index + 1][1]
            code, copied = f"({code}[{key!r}] if _tq_type({code}) is _tq_proxy else _tq_dict({code})[{key!r}])", index
        elif op == "attr" or op == "call":
            if not str(arg).isidentifier():
                raise UnknownGuard(f"{source}: {arg!r} is not an attribute name")
            code = f"{code}.{arg}" + ("()" if op == "call" else "")
        elif op == "item":
            code = f"{code}[{arg!r}]"
        elif op == "key":
            code = f"_tq_list(_tq_dict.keys({code}))[{int(arg)}]"
        elif op == "at":
            code = f"_tq_dict.__getitem__({code}, _tq_list(_tq_dict.keys({code}))[{int(arg)}])"
        else:
            code = f"_tq_{op}({code})"
    if hoisted is not None and reads is not None and code not in params:
        if code not in hoisted:
            hoisted[code] = f"_tq_s{len(hoisted)}"
            reads.append(f"{hoisted[code]} = {code}")
        code = hoisted[code]
    return code
