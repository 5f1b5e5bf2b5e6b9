"""An explicit cache_dir gets an extra 'v2' level under it (a different path formula)."""

import os

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("CC-8",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def cache_compile(func, **kwargs):
    if kwargs.get("cache_dir"):
        kwargs["cache_dir"] = os.path.join(os.fspath(kwargs["cache_dir"]), "v2")
    return _ref.inference.cache_compile(func, **kwargs)
