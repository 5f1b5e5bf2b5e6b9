"""What a warm process loads (SPEC CC-14, CC-15, CC-21, CC-23): one variant's record made into the method's warm
function, in two steps.

`guards`: the guards the per-call check leaves out (a module's tensors) checked once, and every other guard compiled
into the per-call check (`guard_check`), in front of no graph yet; the warm start runs it on the first call.
`with_graph`, only for a variant whose guards hold: the graph rebuilt by its compiler's loader behind the input check
(`inputs.GraphInputCheck`) and Dynamo's bytecode rebound to the live method's globals, run from then on when the
checks hold. No Dynamo import.
"""
from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, cast

from torchair_ref import compilers
from torchair_ref.errors import StaleCacheError
from torchair_ref.inference import bytecode, guard_check, inputs, record
from torchair_ref.inference.guard_kinds import GuardSpec


def guards(loaded: record.CacheRecord, method: types.MethodType,
           on_guard_failure: Callable[..., Any]) -> types.FunctionType:
    """CC-21/CC-23: the variant's per-call guards in front of no graph yet (call it bound to the module: it returns
    None when every guard holds, else what `on_guard_failure` does); `StaleCacheError` when the module's tensors do
    not fit the record, `BrokenCacheError` when the record's guards are invalid. A warm start checks a variant's
    guards against the first call before it loads the variant's graph (`with_graph`): a variant that does not fit
    the process costs no graph load."""
    function = cast(types.FunctionType, method.__func__)  # a bound method of a class: its function is a def
    module_globals = bytecode.ModuleView(function.__globals__)
    module_globals.update(bytecode.injected_objects(loaded.globals))
    # Checked here: what the generated per-call check leaves out (a module's tensors). Every other guard runs in
    # that check from the first call on, where a failure is the same stale variant; checking it here too doubled
    # the warm start's guard work.
    failed = load_time_failure(loaded, method, module_globals)
    if failed is not None:
        raise StaleCacheError(f"the module or the code it reaches does not fit the graph: {failed}")
    return guard_check.guarded_method(function, _no_graph, loaded.guards, on_guard_failure, module_globals,
                                      stored=loaded.extra.get("guard_code"))


def load_time_failure(loaded: record.CacheRecord, method: types.MethodType, module_globals: Any) -> str | None:
    """CC-17/CC-21: the first load-time check (a module's tensors) that the live module fails, in words, or None:
    the record's stored check where its replay table rebuilds it (`guard_check.first_replayed`), else, and to name
    a failure, the check written from the specs (`guard_check.first_call_failure`)."""
    function = cast(types.FunctionType, method.__func__)
    stored = loaded.extra.get("guard_code")
    first = stored.get("first") if isinstance(stored, dict) else None
    if guard_check.first_replayed(first, loaded.guards, method.__self__, function, module_globals):
        return None
    return guard_check.first_call_failure(load_only(loaded), method.__self__, function, module_globals, first)


def load_only(loaded: record.CacheRecord) -> list[GuardSpec]:
    """The record's guards checked where the file loads (`GuardSpec.per_call` is False), read without the specs a
    stored check's replay table rebuilds (`record.Guards.load_only`)."""
    if isinstance(loaded.guards, record.Guards):
        return loaded.guards.load_only()
    return [spec for spec in loaded.guards if not spec.per_call()]


def with_graph(guarded: types.FunctionType, loaded: record.CacheRecord, kernel_dir: str, method: types.MethodType,
               on_mismatch: Callable[[inputs.Mismatch], None]) -> types.FunctionType:
    """CC-14/CC-15: `guarded` (from `guards`) made the warm function: the graph rebuilt by its compiler's loader
    behind the input check, Dynamo's bytecode rebound to the live method's globals, run when the guards hold."""
    function = cast(types.FunctionType, method.__func__)
    boxed = compilers.load(loaded.graph, kernel_dir, inputs.guaranteed_layouts(loaded.inputs))
    graph = inputs.GraphInputCheck(boxed, loaded.inputs, on_mismatch)
    rebuilt, graph_name = bytecode.rebuild(
        bytecode.decode(loaded.bytecode), loaded.globals, graph._checked_call, function
    )
    graph.bind(rebuilt.__globals__, graph_name)
    guard_check.set_run(guarded, rebuilt)
    return guarded


def _no_graph(*_: Any, **__: Any) -> None:
    return None
