"""Read what Dynamo guarded for the cached frame, at the cold trace (SPEC CC-21): the one place that walks Dynamo's
private guard tree (torch 2.13 and 2.14 lay it out the same way).

The frame's cache entry (`_torch.cache_entries`) holds a `GuardManagerWrapper`; its
`root` is a tree of `GuardManager`s, one per source (`L['x']`, `L['self']._modules['lin']`, `G['helper']`), each with
leaf guards (`get_leaf_guards()`: the class name is the kind, `verbose_code_parts()` the text); a `DictGuardManager`
also fixes its dict's length and guards its entries by insertion index (`get_key_value_managers()`); the shape
environment's guards hang off the root as epilogue `LAMBDA_GUARD`s. Each leaf becomes a `guard_kinds.RawGuard` and
the registry's typed specs (`guard_kinds.translate`), given the live object at its source (the cold call's
arguments, the module, the function's globals) when its kind reads one.
"""
from __future__ import annotations

import collections
import copy
import inspect
import io
import tokenize
import types
from dataclasses import dataclass
from typing import Any, cast

import torch

from torchair_ref import _torch
from torchair_ref.errors import UncacheableError
from torchair_ref.inference import guard_check, guard_kinds, record
from torchair_ref.inference.guard_kinds import GuardSpec, RawGuard, UnknownGuard


def strip_comment(text: str) -> str:
    """Dynamo's verbose code text without its trailing `# user line # file:line` comments (pure)."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                return text[:token.start[1]].rstrip()
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return text.strip()


class Before:
    """CC-21: the objects Dynamo guarded, as they were before the cold call ran, by guard source.

    Given to `torch.compile` as its public `guard_filter_fn` option: Dynamo calls it when it builds the guards,
    after tracing and before the traced frame runs, with the value at each guard's source (keeping every guard).
    Containers are copied (shallow, of the same type), so that a method appending to a list argument or adding to a
    dict still records the length it started from; immutable values (a counter's int) are kept as they are. Only the
    first compile is kept: the one that is saved."""

    def __init__(self) -> None:
        self.values: dict[str, Any] | None = None

    def __call__(self, entries: Any) -> list[bool]:
        if self.values is None:
            values = {}
            for entry in entries:
                name = getattr(getattr(entry, "orig_guard", None), "name", None)
                if isinstance(name, str) and getattr(entry, "has_value", False):
                    value = entry.value
                    values[name] = copy.copy(value) if type(value) in _CONTAINERS else value
            self.values = values
        return [True] * len(entries)


_CONTAINERS = (list, dict, collections.OrderedDict)


def guard_specs(code: types.CodeType, function: types.FunctionType, module: Any, args: tuple[Any, ...],
                kwargs: dict[str, Any], graph_inputs: frozenset[str], before: dict[str, Any] | None = None,
                refused: list[str] | None = None, traced: frozenset[types.CodeType] | None = None
                ) -> list[GuardSpec]:
    """CC-21: the checks for every guard Dynamo holds for `code` (its one compiled version), with the values at
    their sources from `before` (`Before.values`: the state before the cold call) and, for a source not there,
    from the first call's `args`/`kwargs` and the live module; a guarded class is identified by the code of the
    methods Dynamo `traced` (`Traced.codes`; by all of its code without it). Raises `UnknownGuard` naming a guard
    that cannot be translated (or, given a `refused` list, appends its reason there and goes on: the survey)."""
    before = before or {}
    entries = _torch.cache_entries(code)
    if len(entries) != 1:
        raise UnknownGuard(f"Dynamo holds {len(entries)} compiled versions of {code.co_name}")
    wrapper = entries[0].guard_manager
    wrapper.populate_code_parts_for_debugging()
    bound = inspect.signature(function).bind(module, *args, **kwargs)
    bound.apply_defaults()
    frame = {**dict(bound.arguments), **guard_check.cells(function)}
    fixed = frozenset({function.__code__.co_varnames[0], *function.__code__.co_freevars})
    specs: list[GuardSpec] = []
    seen: set[str] = set()

    def add(kind: str, source: str | None, guard: Any, value: Any = None) -> None:
        if guard is not None:
            parts = tuple(strip_comment(p) for p in guard.verbose_code_parts())
        else:  # a guard of our own (a dict's length): its text says what it checks
            parts = (f"len({source}) == {len(value)}",)
        raw = RawGuard(kind, source, parts, value, fixed, graph_inputs, traced)
        try:
            translated = guard_kinds.translate(raw)
        except UnknownGuard as exc:
            if refused is None:
                raise
            refused.append(str(exc))
            return
        for spec in translated:
            key = repr(spec.to_json())
            if key not in seen:  # the same guard is listed under each source it reads
                seen.add(key)
                specs.append(spec)

    def value_at(source: str) -> Any:
        if source in before:
            return before[source]
        return guard_check.resolve(source, frame, function.__globals__)

    def walk(manager: Any, source: str | None) -> None:
        for guard in manager.get_leaf_guards():
            kind = type(guard).__name__
            try:
                value = _value(kind, source, value_at) if guard_kinds.reads_value(kind) else None
            except UnknownGuard as exc:
                if refused is None:
                    raise
                refused.append(str(exc))
                continue
            add(kind, source, guard, value)
            if kind == "TYPE_MATCH" and isinstance(value, torch.nn.Module):
                for hooks in _HOOK_DICTS:  # torch 2.13 skips them (`skip_nnmodule_hook_guards`); 2.14 guards them
                    add("DICT_LENGTH", f"{source}.{hooks}", None, getattr(value, hooks))
        if type(manager).__name__ == "DictGuardManager":
            add("DICT_GUARD", source, None, value_at(cast(str, source)))  # a dict's manager is a child: it has one
            for index, (key_manager, value_manager) in sorted(manager.get_key_value_managers().items()):
                if key_manager is not None:
                    walk(key_manager, f"list(dict.keys({source}))[{int(index)}]")
                if value_manager is not None:
                    walk(value_manager, f"{source}[list(dict.keys({source}))[{int(index)}]]")
        for child in manager.get_child_managers():
            walk(child, child.get_source())

    root = wrapper.root
    walk(root, None)
    for guard in root.get_epilogue_lambda_guards():
        add(type(guard).__name__, None, guard)
    return specs


#: the hook dicts of a module that its call runs (a hook added or removed after the cold trace changes the result)
_HOOK_DICTS = ("_forward_hooks", "_forward_pre_hooks")


def _value(kind: str, source: str | None, value_at: Any) -> Any:
    if kind == "DEFAULT_DEVICE":
        return _torch.default_device_module().CURRENT_DEVICE
    if source is None:
        raise UnknownGuard(f"{kind} on no source")
    try:
        return value_at(source)
    except Exception as exc:  # noqa: BLE001 - a source we cannot follow is a guard we cannot translate
        raise UnknownGuard(f"{kind} on {source}, which cannot be read back ({exc!r})") from exc


@dataclass(frozen=True)
class Traced:
    """What Dynamo traced for a compile: its code objects (they identify the methods of a guarded class that the
    trace reached, CC-21 (f)) and their sources as the record keeps them (CC-14)."""

    codes: frozenset[types.CodeType]
    sources: list[record.TracedSource]
    #: each traced file's status from before its bytes were read, where it has one (`file_states`)
    states: dict[str, list[int]]


def trace_facts() -> tuple[Any, Traced | UncacheableError]:
    """The current compile id and the code Dynamo traced for it, read from Dynamo's tracing context.

    Each is replaced by the reason (an `UncacheableError`) when this torch does not offer it: the graph then runs but
    is not cached.
    """
    try:
        compile_id: Any = _torch.current_compile_id()
        if compile_id is None:
            compile_id = UncacheableError("Dynamo gave no compile id")
    except Exception as exc:  # noqa: BLE001 - a private API of another torch release: not cacheable, still runs
        compile_id = UncacheableError(f"Dynamo's compile id is not readable on torch {torch.__version__}: {exc!r}")
    try:
        codes = _torch.traced_code()
        if not codes:
            return compile_id, UncacheableError("Dynamo reported no traced code")
        states: dict[str, list[int]] = {}
        return compile_id, Traced(frozenset(codes), record.traced_sources(codes, states), states)
    except Exception as exc:  # noqa: BLE001 - as above
        return compile_id, UncacheableError(
            f"the code Dynamo traced is not known ({exc!r}); a warm start could not check it")
