"""cache_compile and readable_cache (SPEC sections 2 and 3), resolved on first use like the package surface."""
from __future__ import annotations

import importlib
from typing import Any

_SURFACE = {
    "cache_compile": "torchair_ref.inference.cached",
    "readable_cache": "torchair_ref.inference.readable",
}
__all__ = list(_SURFACE)


def __getattr__(name: str) -> Any:
    if name not in _SURFACE:
        raise AttributeError(f"module 'torchair_ref.inference' has no attribute {name!r}")
    value = getattr(importlib.import_module(_SURFACE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
