"""``custom_decompositions`` given to ``cache_compile`` is not applied."""

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("CC-19",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def cache_compile(func, **kwargs):
    kwargs.pop("custom_decompositions", None)
    return _ref.inference.cache_compile(func, **kwargs)
