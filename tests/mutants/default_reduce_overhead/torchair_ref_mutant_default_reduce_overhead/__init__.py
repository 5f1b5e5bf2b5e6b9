"""Mutant breaking CF-1: a new ``CompilerConfig()`` starts in mode "reduce-overhead", not "max-autotune"."""

import types

import torchair_ref as _ref
from torchair_ref import dynamo_export, logger  # noqa: F401

__conformance__ = _ref.__conformance__


class CompilerConfig(_ref.CompilerConfig):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.mode = "reduce-overhead"


def get_npu_backend(*, compiler_config=None, custom_decompositions=None):
    return _ref.get_npu_backend(compiler_config=compiler_config or CompilerConfig(),
                                custom_decompositions=custom_decompositions)


inference = types.SimpleNamespace(cache_compile=_ref.inference.cache_compile,
                                  readable_cache=_ref.inference.readable_cache)
