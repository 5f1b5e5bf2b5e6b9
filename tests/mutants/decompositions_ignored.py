"""``custom_decompositions`` given to ``cache_compile`` is not applied."""

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("CC-19",)


def cache_compile(func, **kwargs):
    kwargs.pop("custom_decompositions", None)
    return _ref.inference.cache_compile(func, **kwargs)


__getattr__ = reference_for(globals())
