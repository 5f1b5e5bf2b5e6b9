"""cache_compile and readable_cache (SPEC section 2 and 3)."""
