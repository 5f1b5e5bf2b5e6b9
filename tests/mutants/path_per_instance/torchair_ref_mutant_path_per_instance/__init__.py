"""Mutant breaking CC-10: the md5 of ``<model_info>`` covers the module instance (its ``id``), so two instances of
the same structure and config get different paths."""

import types

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def cache_compile(func, **kwargs):
    module = getattr(func, "__self__", None)
    if module is not None and hasattr(module, "extra_repr"):
        own = module.extra_repr()
        # An instance attribute shadows the class's extra_repr, so str(module) names this instance.
        module.extra_repr = lambda: f"{own}, instance={id(module):x}" if own else f"instance={id(module):x}"
    return _ref.inference.cache_compile(func, **kwargs)


inference = types.SimpleNamespace(cache_compile=cache_compile, readable_cache=_ref.inference.readable_cache)
