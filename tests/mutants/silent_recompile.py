"""The 'Skip cache as ... recompiled' UserWarning is swallowed."""

import warnings

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("CC-12",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def cache_compile(func, **kwargs):
    compiled = _ref.inference.cache_compile(func, **kwargs)

    def call(*args, **kw):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*Skip cache as")
            return compiled(*args, **kw)

    return call
