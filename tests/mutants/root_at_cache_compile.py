"""The cache root is resolved when ``cache_compile(...)`` is called (its cwd and ``$TORCHAIR_CACHE_HOME`` then), not at
the first call."""

import os

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("CC-7",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def cache_compile(func, **kwargs):
    root = kwargs.get("cache_dir") or os.environ.get("TORCHAIR_CACHE_HOME") or ".torchair_cache"
    kwargs["cache_dir"] = os.path.abspath(root)
    return _ref.inference.cache_compile(func, **kwargs)
