"""Mutant breaking CF-2: configs compare equal only to themselves (identity, not value)."""

import types

import torchair_ref as _ref
from torchair_ref import dynamo_export, logger  # noqa: F401

__conformance__ = _ref.__conformance__


class CompilerConfig(_ref.CompilerConfig):
    __eq__ = object.__eq__
    __hash__ = object.__hash__


def get_npu_backend(*, compiler_config=None, custom_decompositions=None):
    return _ref.get_npu_backend(compiler_config=compiler_config or CompilerConfig(),
                                custom_decompositions=custom_decompositions)


inference = types.SimpleNamespace(cache_compile=_ref.inference.cache_compile,
                                  readable_cache=_ref.inference.readable_cache)
