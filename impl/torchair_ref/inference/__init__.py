"""cache_compile and readable_cache (SPEC sections 2 and 3)."""
from torchair_ref.inference.cached import cache_compile
from torchair_ref.inference.readable import readable_cache

__all__ = ["cache_compile", "readable_cache"]
