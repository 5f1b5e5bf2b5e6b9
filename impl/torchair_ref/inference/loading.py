"""What a warm process loads (SPEC CC-14, CC-15, CC-21): one variant's record made into the method's warm function.

Dynamo's bytecode rebound to the live method's globals, the graph rebuilt by its compiler's loader behind the input
check (`inputs.GraphInputCheck`), the guards the per-call check leaves out (a module's tensors) checked once here, and
every other guard compiled in front of it (`guard_check`), checked from the first call on. No Dynamo import.
"""
from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, cast

from torchair_ref import compilers
from torchair_ref.errors import StaleCacheError
from torchair_ref.inference import bytecode, guard_check, inputs, record


def warm_function(loaded: record.CacheRecord, kernel_dir: str, method: types.MethodType,
                  on_mismatch: Callable[[inputs.Mismatch], None],
                  on_guard_failure: Callable[..., Any]) -> types.FunctionType:
    """The warm function for `method` (call it bound to the module); `StaleCacheError` when the module or the code
    it reaches does not fit the record's guards, `BrokenCacheError` when the record's guards or inputs are invalid."""
    function = cast(types.FunctionType, method.__func__)  # a bound method of a class: its function is a def
    module_globals = bytecode.ModuleView(function.__globals__)
    module_globals.update(bytecode.injected_objects(loaded.globals))
    # Checked here: what the generated per-call check leaves out (a module's tensors). Every other guard runs in
    # that check from the first call on, where a failure is the same stale variant; checking it here too doubled
    # the warm start's guard work.
    load_only = [spec for spec in loaded.guards if not spec.per_call()]
    failed = guard_check.first_call_failure(load_only, method.__self__, function, module_globals)
    if failed is not None:
        raise StaleCacheError(f"the module or the code it reaches does not fit the graph: {failed}")
    boxed = compilers.load(loaded.graph, kernel_dir, inputs.guaranteed_layouts(loaded.inputs))
    graph = inputs.GraphInputCheck(boxed, loaded.inputs, on_mismatch)
    rebuilt, graph_name = bytecode.rebuild(
        bytecode.decode(loaded.bytecode), loaded.globals, graph._checked_call, function
    )
    graph.bind(rebuilt.__globals__, graph_name)
    return guard_check.guarded_method(function, rebuilt, loaded.guards, on_guard_failure, module_globals)
