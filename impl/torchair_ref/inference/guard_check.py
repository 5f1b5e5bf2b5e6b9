"""Run the record's guard checks on a warm start, without Dynamo (SPEC CC-14, CC-21).

Each check is the Python boolean expression its guard kind writes (`guard_kinds`, `GuardSpec.test`), over code that
reads its sources and names bound to its constants. `first_call_failure` evaluates the checks of the module and the
code it reaches (`when == "first"`) once, on the first call, by following each source from the live module and the
function's globals. `guarded_method` wraps the warm function in a function with the method's own signature whose
body is generated code reading and checking the arguments, the module, its globals and closure cells, run on every
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

import hashlib
import inspect
import marshal
import re
import sys
import threading
import types
from collections.abc import Callable, Sequence
from typing import Any

import torch

from torchair_ref import _torch
from torchair_ref.errors import BrokenCacheError
from torchair_ref.inference import (
    check_code,
    guard_bindings,
    guard_expressions,
    guard_kinds,
    guard_layout,
    guard_spec,
)
from torchair_ref.inference.guard_kinds import GuardSpec, UnknownGuard
from torchair_ref.inference.guard_kinds.ambient import global_state_checks  # noqa: F401 - where tests look for it
from torchair_ref.inference.guard_spec import cells as cells  # read a live source: callers find them here
from torchair_ref.inference.guard_spec import resolve as resolve
from torchair_ref.inference.guard_spec import source_code as _source_code  # called through this name (tests count)
from torchair_ref.inference.guard_values import loaded_code_digest, qualified_name


def first_call_failure(specs: list[GuardSpec], module: Any, function: types.FunctionType,
                       module_globals: Any, stored: Any = None) -> str | None:
    """CC-21: the first module/code check that the live module fails, in words naming Dynamo's guard, or None.
    `stored` is a record's `stored_code()["first"]`: its code is used where it was compiled from this very check."""
    memo: dict[str, Any] = {}
    namespace = _first_namespace(module, function, module_globals, memo)
    writer = check_code.Writer(namespace, _at)
    first = [spec for spec in specs if spec.when == "first"]
    if not first:
        return None
    text = _first_text(first, writer)
    namespace["_tq_B"] = guard_layout.constants(namespace)
    try:  # all of them as one expression, compiled once (a module's 28 tensors took 28 compiles); one by one below
        if eval(_first_code(text, stored), namespace):  # noqa: S307
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


def first_replayed(stored: Any, specs: Sequence[GuardSpec], module: Any, function: types.FunctionType,
                   module_globals: Any) -> bool:
    """CC-17/CC-21: whether the record's load-time check (`stored`: `stored_code()["first"]`) holds for the live
    module, its constants rebuilt from its replay table (`specs.first`, a `record.Guards`' table this code wrote)
    without reading the specs it rebuilds (GPT-2's 28 tensor specs, and writing their check, were a fifth of its
    load-time check). False where it does not hold or cannot be used: `first_call_failure` then writes the check
    from the specs and names what fails."""
    table = getattr(specs, "first", None)
    if table is None or not isinstance(stored, dict):
        return False
    try:
        bound = guard_bindings.replayed(table, writer_digests(), _FIRST, specs.__getitem__)
    except Exception:  # noqa: BLE001 - a spec to re-run that is not valid: the slow path reads it and says so
        return False
    code = check_code.decoded(stored.get("code"), "<torchair_ref guards>")
    items = guard_layout.constants(bound) if bound is not None else None
    if bound is None or code is None or items is None:
        return False
    namespace = _first_namespace(module, function, module_globals, {})
    namespace.update(bound, _tq_B=items)
    try:
        return bool(eval(code, namespace))  # noqa: S307
    except Exception:  # noqa: BLE001 - a source that is gone: the slow path names it
        return False


_FIRST = ["<torchair_ref guards>", "load-time check"]  # its signature in its replay table


def _at(source: str) -> str:
    """A read of `source` in the load-time check, with the source as parsed here where each step's argument is a
    str, an int or None (the stored check then parses none: GPT-2's 28 tensor sources took a third of it)."""
    parsed = guard_spec.parsed_source(source)
    plain = all(type(arg) in (str, int, type(None)) for _, arg in parsed[1])
    return f"_tq_at({source!r}, {parsed if plain else None!r})"


def _first_namespace(module: Any, function: types.FunctionType, module_globals: Any,
                     memo: dict[str, Any]) -> dict[str, Any]:
    """What the load-time check runs in: no builtins, and `_tq_at`, which reads a source from the live module (the
    method's `self`), its closure cells and `module_globals`."""
    frame = {function.__code__.co_varnames[0]: module, **cells(function)}
    return {"__builtins__": {}, "_tq_at": lambda s, parsed: resolve(s, frame, module_globals, memo, parsed)}


def _first_text(first: list[GuardSpec], writer: check_code.Writer, logs: list[list[str]] | None = None) -> str:
    """The load-time check as one expression; `logs` is given the names each spec bound, in order."""
    texts = []
    for spec in first:
        writer.log = [] if logs is not None else None
        texts.append(f"({spec.test(writer)})")
        if writer.log is not None and logs is not None:
            logs.append(writer.log)
    writer.log = None
    return guard_layout.numbered(" and ".join(texts))


def _first_code(text: str, stored: Any) -> types.CodeType:
    """The load-time check `text` compiled: the record's copy where it was compiled from this very text (compiling
    GPT-2's 28 tensor checks took half of their check), else here."""
    if isinstance(stored, dict) and stored.get("sha256") == hashlib.sha256(text.encode()).hexdigest():
        code = check_code.decoded(stored.get("code"), "<torchair_ref guards>")
        if code is not None:
            return code
    return compile(text, "<torchair_ref guards>", "eval")


def global_state_now() -> str:
    """The live global state as GLOBAL_STATE's C++ guard writes it (JSON), to name what differs (CC-23)."""
    return str(_torch.global_state_guard()().__getstate__())


class _Written:
    """CC-21: the per-call check of `specs` for `function` as generated code: its `source`, the `namespace` binding
    what it names, and what the slow path (`_tq_which`) needs to write its own code. Its `outline` is the same check
    with each read of a source left as a placeholder: what a stored check is matched by, without reading a source."""

    def __init__(self, function: types.FunctionType, specs: Sequence[GuardSpec], namespace: dict[str, Any]) -> None:
        code = function.__code__
        self._all: Sequence[GuardSpec] = specs
        self._specs: list[GuardSpec] | None = None
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
        namespace.update({"__builtins__": {}, "_tq_GONE": check_code.Gone(), "Exception": Exception, "_tq_list": list,
                          "_tq_dict": dict, "_tq_type": type, "_tq_proxy": types.MappingProxyType,
                          "_tq_cells": dict(zip(code.co_freevars, function.__closure__ or ()))})
        self.namespace = namespace
        self._arguments: set[str | None] = {*names, varargs, varkw}
        self.pack, self.forward = ", ".join(params), ", ".join(call)
        self.title = f"<torchair_ref guards of {function.__qualname__}>"
        self._writer = check_code.Writer(namespace, _no_read)
        self._outlined: tuple[list[str], list[str]] | None = None
        self._written: tuple[list[str], list[str], str] | None = None
        self.bound: list[list[str]] = []  # the names each spec's check bound (`_outline`), for `guard_bindings`

    @property
    def specs(self) -> list[GuardSpec]:
        """The per-call specs (read from the record's only when the check is written from them)."""
        if self._specs is None:
            self._specs = [spec for spec in self._all if spec.per_call()]
        return self._specs

    def signature(self) -> list[str]:
        return [self.title, self.pack, self.forward]

    def apart(self) -> None:
        """Write from now on into a copy of the namespace: the constants the calls read were bound without writing
        the check (a replay), and writing it later (the slow path) binds its own."""
        self.namespace = dict(self.namespace)
        self._writer = check_code.Writer(self.namespace, _no_read)

    def _outline(self) -> tuple[list[str], list[str]]:
        """Each check's text with each read of a source as a placeholder (`_tq_p{n}`), and the sources read, in that
        order: the one pass over the specs, which binds their constants (the source is written from it)."""
        if self._outlined is None:
            sources: list[str] = []

            def placeholder(source: str) -> str:
                sources.append(source)
                return f"_tq_p{len(sources) - 1}"

            writer, tests = self._writer.reading(placeholder), []
            for spec in self.specs:
                writer.log = []
                tests.append(spec.test(writer))
                self.bound.append(writer.log)
            self._outlined = tests, sources
        return self._outlined

    def outline(self) -> str:
        """The SHA-256 of the outline (`_outline`), the signature and the code that writes the source from them: the
        same outline, under the same implementation, is the same source, binding the same names in the same order."""
        tests, sources = self._outline()
        parts = (_generator(), self.title, self.pack, self.forward, tests, sources)
        return hashlib.sha256(marshal.dumps(parts, 2)).hexdigest()

    def _write(self) -> tuple[list[str], list[str], str]:
        # Each placeholder replaced by the code reading its source. Each distinct source prefix is read once per
        # call, into a local (`hoisted`): the checks of a deep module share most of their paths. The fast path lays
        # the reads and checks out with few names (`guard_layout`); the slow path (`_tq_which`, only after a
        # failure) runs each read and each check alone. One statement per line: a column past 127 takes the long
        # form of each entry of the code's position table, which then was as large as the bytecode itself.
        if self._written is None:
            outlined, sources = self._outline()
            hoisted: dict[str, str] = {}
            reads: list[str] = []
            codes = [_source_code(source, self._arguments, hoisted, reads) for source in sources]
            tests = [_PLACEHOLDER.sub(lambda m: m.group(1) or codes[int(m.group(2))], test) for test in outlined]
            source = (
                f"def guarded({self.pack}):\n"
                "    try:\n"
                + "".join(f"        {line}\n" for line in guard_layout.laid_out(reads, tests))
                + "        ok = True\n"
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
_PLACEHOLDER = re.compile(guard_layout.LITERAL + r"|\b_tq_p([0-9]+)\b")


def _no_read(source: str) -> str:
    raise AssertionError(f"a source read outside a check: {source}")


def _generator() -> list[str]:
    """The digests of the code that writes a check's source from its outline, each as the process loaded it
    (`loaded_code_digest`, taken in the module's body): this module, the names' writer, the source reader, the
    expression rewriter (another writer: another outline) and the fast path's layout."""
    return [LOADED_DIGEST, check_code.LOADED_DIGEST, guard_spec.LOADED_DIGEST, guard_expressions.LOADED_DIGEST,
            guard_layout.LOADED_DIGEST]


LOADED_DIGEST = loaded_code_digest(sys._getframe(0).f_code)  # this module's code as the process loaded it


def writer_digests() -> list[str]:
    """What a stored check's replay table must have been written by (`guard_bindings.table`): this process's check
    writer, guard kinds, identities and constant recipes, as it loaded them."""
    return guard_bindings.writer(_generator(), guard_kinds.writer_digests())


def guarded_method(function: types.FunctionType, run: Callable[..., Any], specs: Sequence[GuardSpec],
                   on_fail: Callable[..., Any], module_globals: Any,
                   stored: Any = None) -> types.FunctionType:
    """CC-21: a function with `function`'s signature that calls `run` with its arguments when every per-call check
    holds, else `on_fail(spec, *args, **kwargs)` with the first check that fails alone, None when every check
    holds alone (the guarded state changed while it was checked), or the `BrokenCacheError` met reading a spec to
    name it (a record edited after its replay table was written) (`on_fail` must raise or compute the call, never
    crash: CC-17; `args` starts with the method's `self`). `stored` is a record's `stored_code`: used when it holds
    this very source."""
    written = _Written(function, specs, {"_tq_run": run, "_tq_fail": on_fail, "_tq_G": module_globals})
    namespace, writing = written.namespace, threading.Lock()

    def which(*args: Any, **kwargs: Any) -> GuardSpec | None:
        """The first check that fails alone, or None when each holds alone: the same checks over the same bound
        objects, each read and each check in its own `try` (a read that fails leaves `_tq_GONE`, which fails what
        uses it). Its code is written at the first failure, not before, by one thread."""
        space = written.namespace  # after a replay, a copy: writing the checks binds there, never where calls read
        with writing:
            if "_tq_which" not in space:
                each_read = "".join(f"    try:\n        {line}\n    except Exception:\n"
                                    f"        {line.split(' = ', 1)[0]} = _tq_GONE\n" for line in written.reads)
                each_test = "".join(f"    try:\n        if not ({t}):\n            return {i}\n"
                                    f"    except Exception:\n        return {i}\n"
                                    for i, t in enumerate(written.tests))
                # after a replay, the same constants as the calls' (an ID_MATCH's memory of what passed), as the
                # checks just written name them: the cold process's order of first binding
                space.update((name, value) for name, value in namespace.items() if name.startswith("_tq_b"))
                exec(compile(f"def _tq_which({written.pack}):\n{each_read}{each_test}    return -1\n",  # noqa: S102
                             written.title, "exec"), space)
                space["_tq_which"].__defaults__ = function.__defaults__
                space["_tq_which"].__kwdefaults__ = function.__kwdefaults__
        found: int = space["_tq_which"](*args, **kwargs)
        return None if found < 0 else written.specs[found]

    def named(*args: Any, **kwargs: Any) -> GuardSpec | BrokenCacheError | None:
        try:
            return which(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - a spec the replay did not read is not valid (a resealed edit):
            return BrokenCacheError(f"a guard the record holds is not valid ({type(exc).__name__}: {exc}): the record "
                                    "was edited after it was written")

    namespace["_tq_find"] = named
    # CC-14: the stored code with its constants rebuilt from the replay table that came with `specs` (a record's
    # `Guards`: the table and the specs were sealed in one file), without reading the specs it rebuilds; else the
    # stored code after the outline pass, or the source compiled.
    bound = guard_bindings.replayed(getattr(specs, "replay", None), writer_digests(), written.signature(),
                                    specs.__getitem__) if isinstance(stored, dict) else None
    code = check_code.decoded(stored.get("code"), written.title) if bound is not None else None
    items = guard_layout.constants(bound) if bound is not None and code is not None else None
    if bound is not None and code is not None and items is not None:
        namespace.update(bound)
        written.apart()
    else:
        code = _stored_or_compiled(written, stored)
        items = guard_layout.constants(namespace)  # the writer numbers them from 0: never None
    namespace["_tq_B"] = items  # the constants as the fast path names them (`guard_layout`)
    exec(code, namespace)  # noqa: S102
    guarded: types.FunctionType = namespace["guarded"]
    guarded.__defaults__ = function.__defaults__
    guarded.__kwdefaults__ = function.__kwdefaults__
    guarded.__qualname__ = function.__qualname__
    return guarded


def stored_code(function: types.FunctionType, specs: Sequence[GuardSpec]) -> dict[str, Any]:
    """CC-14: the per-call check of `specs` for `function` compiled now, as a record keeps it: the SHA-256 of its
    source, its outline (`_Written.outline`: what the source is written from) and its code (marshalled,
    compressed, base64). `guarded_method` loads it for the same outline; the SHA-256 names it in `readable_cache`."""
    written = _Written(function, specs, {})
    code = compile(written.source, written.title, "exec")
    stored: dict[str, Any] = {"sha256": written.digest(), "outline": written.outline(),
                              "code": check_code.encoded(code)}
    at = [index for index, spec in enumerate(specs) if not spec.per_call() and spec.when == "first"]
    if at:
        namespace: dict[str, Any] = {}
        logs: list[list[str]] = []
        text = _first_text([specs[index] for index in at], check_code.Writer(namespace, _at), logs)
        stored["first"] = {"sha256": hashlib.sha256(text.encode()).hexdigest(),
                           "code": check_code.encoded(compile(text, "<torchair_ref guards>", "eval"))}
        table = guard_bindings.table(writer_digests(), _FIRST, [specs[index] for index in at], logs, namespace, at)
        if table is not None:
            stored["first"]["replay"] = table
    replay = guard_bindings.table(writer_digests(), written.signature(), written.specs, written.bound,
                                  written.namespace, [index for index, spec in enumerate(specs) if spec.per_call()])
    return stored if replay is None else {**stored, "replay": replay}


def _stored_or_compiled(written: _Written, stored: Any) -> types.CodeType:
    """CC-14/CC-17: the stored code when `stored` holds code for this check (the same outline: no source is read or
    written), else the source compiled (a record without it, another check, or a value that does not decode to
    code written for this check: the check is written here as it always could be)."""
    if isinstance(stored, dict) and isinstance(stored.get("outline"), str) and stored["outline"] == written.outline():
        code = check_code.decoded(stored.get("code"), written.title)
        if code is not None:
            return code
    return compile(written.source, written.title, "exec")


def set_run(guarded: types.FunctionType, run: Callable[..., Any]) -> None:
    """What `guarded` (from `guarded_method`) calls from now on when its checks hold."""
    guarded.__globals__["_tq_run"] = run
