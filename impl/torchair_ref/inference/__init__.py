"""cache_compile and readable_cache (SPEC sections 2 and 3), resolved on first use like the package surface."""
from __future__ import annotations

from torchair_ref._lazy import surface

_SURFACE = {
    "cache_compile": "torchair_ref.inference.cache_api",
    "readable_cache": "torchair_ref.inference.readable",
}
__all__ = list(_SURFACE)
__getattr__, __dir__ = surface(__name__, _SURFACE, globals())
