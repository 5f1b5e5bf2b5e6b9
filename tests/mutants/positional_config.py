"""``config`` (and more) may be passed positionally."""

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("CC-1",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def cache_compile(func, config=None, *rest, **kwargs):
    return _ref.inference.cache_compile(func, config=config, **kwargs)
