"""What a cold process saves (SPEC CC-11, CC-14, CC-21, CC-23): the record of its trace, built from the compilation,
written beside the variants the process kept.

Everything a warm start needs and checks: Dynamo's transformed bytecode, the globals it injected, the compiled
graph's record and files, the guards translated from Dynamo's (`guard_read`), the code it traced, the environment.
"""
from __future__ import annotations

import datetime
import inspect
import json
import os
import types
from typing import Any, cast

from torchair_ref import _files
from torchair_ref.errors import UncacheableError
from torchair_ref.inference import (
    artifact,
    bytecode,
    guard_check,
    guard_kinds,
    guard_read,
    guard_spec,
    record,
    variants,
)
from torchair_ref.inference.tensor_spec import GraphInput


def payload(method: types.MethodType, traced_code: types.CodeType, args: tuple[Any, ...], kwargs: dict[str, Any],
            *, compilation: Any, uncacheable: tuple[Any, ...], config: Any, dynamic: bool, ge_cache: bool,
            model_info: str, load_failure: dict[str, str] | None,
            before: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, bytes]]:
    """CC-11: the record's payload and the files it names; `UncacheableError` saying why the trace cannot be saved
    (`uncacheable` holds what the caller found outside the graph compiler: errors are raised, other values kept)."""
    from torchair_ref.config import options_string

    graph = compilation.graph if compilation is not None else None
    if graph is None:
        raise UncacheableError("no graph was compiled")
    for reason in (graph.uncacheable, *uncacheable):
        if isinstance(reason, UncacheableError):
            raise reason
    traced = uncacheable[-1]
    function = cast(types.FunctionType, method.__func__)  # a bound method of a class: its function is a def
    module: Any = method.__self__  # the torch.nn.Module the method is bound to
    transformed = bytecode.transformed_code(traced_code)
    try:
        guards = guard_read.guard_specs(traced_code, function, method.__self__, args, kwargs,
                                        frozenset(source for source, _, _ in compilation.inputs), before,
                                        traced=traced.codes)
    except guard_spec.UnknownGuard as exc:
        raise UncacheableError(f"a warm start cannot check Dynamo's guard {exc}") from exc
    written = record.CacheRecord(
        name=f"{function.__qualname__}{inspect.signature(function)}",
        created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        environment=artifact.environment(compilation.device),
        function={
            "module": function.__module__,
            "qualname": function.__qualname__,
            "code_digest": guard_spec.code_digest(function.__code__),
        },
        model_info=model_info,
        training=bool(module.training),
        traced_sources=traced.sources,
        options={
            "mode": config.mode,
            "dynamic": dynamic,
            "ge_cache": ge_cache,
            "options_string": options_string(config),
        },
        bytecode=bytecode.encode(transformed),
        globals=bytecode.injected_globals(transformed, function.__globals__, guard_spec.global_names(guards)),
        inputs=[GraphInput.of(source, role, value, pytype)
                for (source, role, value), pytype in zip(compilation.inputs, _types(compilation))],
        guards=guards,
        graph=graph.record,
        extra={**({"load_failure": load_failure} if load_failure else {}),
               **({"source_states": traced.states} if traced.states else {})},
    )
    saved = written.to_payload()
    check = _stored_check(function, saved)
    if check is not None:
        saved["guard_code"] = check
    return saved, graph.files


def _stored_check(function: types.FunctionType, saved: dict[str, Any]) -> dict[str, str] | None:
    """CC-14: the per-call check a warm start writes from this record, compiled now (`guard_check.stored_code`): from
    the guards as the warm start reads them back (through JSON, as the file keeps them: equal values are then
    distinct objects, as a warm start finds them, and each gets its own name), so that its outline is the one the warm
    start writes. None when the check cannot be written here: it only saves the warm start work, so the record
    is saved without it and the warm start writes (or refuses, saying why) the check as it always could."""
    try:
        read_back = json.loads(json.dumps(saved["guards"], sort_keys=True, separators=(",", ":")))
        return guard_check.stored_code(function, [guard_kinds.from_json(spec) for spec in read_back])
    except Exception:  # noqa: BLE001 - an optimisation: never a reason not to save
        return None


def write(root: str, path: str, payload: dict[str, Any], files: dict[str, bytes],
          kept: list[dict[str, Any]]) -> bool:
    """CC-11/CC-23: write the artifact at `path` (private levels below `root`), the variants this process `kept`
    beside the new one with their kernels; False when another process is saving it."""
    keep: set[str] = set()
    if kept:  # the variants other processes need stay, with their kernels
        payload = variants.joined(kept, payload)
        keep = set().union(*(variants.kernel_files(v) for v in payload["variants"]))
    folder = os.path.dirname(path)
    _files.make_private_levels(root, os.path.join(folder, artifact.KERNEL_DIR) if files or keep else folder)
    return artifact.write(path, payload, files, keep=keep)


def _types(compilation: Any) -> list[str | None]:
    """CC-21: each graph input's recorded Python type, None where the backend did not see it."""
    types = list(getattr(compilation, "input_types", []))
    return types + [None] * (len(compilation.inputs) - len(types))
