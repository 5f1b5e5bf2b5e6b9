"""A cache_dir owned by another user is accepted (the cache goes to a private dir instead)."""

import tempfile

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("CC-3",)
# The clause's test gives a directory to another user, which only root can do.
NEEDS_ROOT = True
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def cache_compile(func, **kwargs):
    try:
        return _ref.inference.cache_compile(func, **kwargs)
    except ValueError as exc:
        if "must be owned by the current user" not in str(exc):
            raise
        kwargs["cache_dir"] = tempfile.mkdtemp()
        return _ref.inference.cache_compile(func, **kwargs)
