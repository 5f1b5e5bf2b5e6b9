"""The variants a cache file keeps (SPEC CC-23): pure rules on payloads, no files.

A `compiled_module` payload holds `{"variants": [record, ...]}`: one `CacheRecord` payload per variant, each with its
own guards, input layouts and graph, oldest first. A payload written before variants existed is one record: it reads
as a file of one variant. A warm start tries the variants in order and runs the first whose guards pass; when none
fits the first call, the process compiles afresh and the new record is appended, the oldest dropped past `LIMIT`
(Dynamo's default recompile limit).
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from torchair_ref.errors import BrokenCacheError

#: the most variants a file keeps (Dynamo's default recompile limit)
LIMIT = 8
_KERNEL_FILE = re.compile(r"^[0-9a-f]{40}\.so$")


def split(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """CC-23: the variant payloads of a file's payload, oldest first (a record without variants is one)."""
    if "variants" not in payload:
        return [payload]
    listed = payload["variants"]
    if not isinstance(listed, list) or not listed or not all(isinstance(v, dict) for v in listed):
        raise BrokenCacheError("the cache's variants are not a non-empty list of records")
    if len(listed) > LIMIT:
        raise BrokenCacheError(f"the cache holds {len(listed)} variants; at most {LIMIT} are ever written")
    return listed


def joined(kept: list[dict[str, Any]], new: dict[str, Any]) -> dict[str, Any]:
    """CC-23: the payload of a file holding the kept variants and then `new`, the oldest dropped past `LIMIT`."""
    variants = [*kept, new]
    return {"variants": variants[-LIMIT:]}


def kernel_files(variant: dict[str, Any]) -> set[str]:
    """The kernel file names (`kernels/<sha>.so`) a variant's graph record names: they stay beside a new save."""
    return {name for name in _strings(variant.get("graph")) if _KERNEL_FILE.match(name)}


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def differing_fields(spec: dict[str, Any] | None, current_state: str | None = None) -> str:
    """What a failed guard found different, for the warning of a new variant (CC-23) (pure).

    For GLOBAL_STATE, `current_state` is the live state as `GlobalStateGuard.__getstate__()` writes it: each
    differing key with the cached and the live value (grad mode excepted: the warm graph runs with grad off whatever
    the caller's mode). Other guards are named with their text. No guard (None): the checks failed together but each
    held when checked again alone."""
    if spec is None:
        return "Dynamo's guards failed on this call but each held when checked again alone: the guarded state " \
               "changed while they ran"
    if spec.get("check") == "global_state" and current_state is not None:
        try:
            cached, live = json.loads(spec["state"]), json.loads(current_state)
        except (ValueError, KeyError, TypeError):
            return f"Dynamo's guard {spec.get('guard')} fails: {spec.get('text')}"
        keys = sorted((set(cached) | set(live)) - {"grad_mode"})
        changed = [f"{k} {cached.get(k)!r} (cached) != {live.get(k)!r} (now)" for k in keys
                   if cached.get(k) != live.get(k)]
        if changed:
            return "Dynamo's guard GLOBAL_STATE fails: " + ", ".join(changed)
    return f"Dynamo's guard {spec.get('guard')} fails: {spec.get('text')}"
