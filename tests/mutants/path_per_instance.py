"""The md5 of ``<model_info>`` covers the module instance (its ``id``), so two instances of the same structure and
config get different paths."""

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("CC-10",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def cache_compile(func, **kwargs):
    module = getattr(func, "__self__", None)
    if module is not None and hasattr(module, "extra_repr"):
        own = module.extra_repr()
        # An instance attribute shadows the class's extra_repr, so str(module) names this instance.
        module.extra_repr = lambda: f"{own}, instance={id(module):x}" if own else f"instance={id(module):x}"
    return _ref.inference.cache_compile(func, **kwargs)
