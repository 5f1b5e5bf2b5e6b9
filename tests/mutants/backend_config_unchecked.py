"""When config and backend disagree, the backend is silently dropped (no ValueError)."""

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("CC-4",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def cache_compile(func, **kwargs):
    backend, config = kwargs.get("backend"), kwargs.get("config")
    if backend is not None and config is not None and backend.keywords.get("compiler_config") != config:
        kwargs.pop("backend")
    return _ref.inference.cache_compile(func, **kwargs)
