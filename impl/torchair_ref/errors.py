"""The exceptions of the reference: all derive from `TorchairRefError` (one `except` for a caller that wants them
all) and keep the builtin base each had (`ValueError`, `RuntimeError`...), so callers' own clauses keep working.

The cache-file exceptions live here, not beside the format, because the file layer (`torchair_ref._files`) that
`compilers` and `inference` share raises them (SPEC CC-17).
"""
from __future__ import annotations


class TorchairRefError(Exception):
    """Base of every exception the reference raises on purpose."""


class CacheFileError(TorchairRefError, ValueError):
    """CC-17: a cache file that is not loaded; `BrokenCacheError` or `StaleCacheError` says why."""


class BrokenCacheError(CacheFileError):
    """CC-17: a cache file that must not be trusted (damaged, foreign, wrong owner or mode)."""


class StaleCacheError(CacheFileError):
    """CC-17: a valid cache written by another format version or environment (Python, torch, device, CANN)."""


class UncacheableError(TorchairRefError):
    """CC-11: why a traced graph cannot be written to a cache (the call still runs, with a warning).

    The one way the reference says "not cacheable": raised where the save stops, and held as the value where the
    reason is found earlier (`CompiledGraph.uncacheable`, what `guard_read.trace_facts` could not read)."""
