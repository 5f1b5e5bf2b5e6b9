"""Configs compare equal only to themselves (identity, not value)."""

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("CF-2",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


class CompilerConfig(_ref.CompilerConfig):
    __eq__ = object.__eq__
    __hash__ = object.__hash__


def get_npu_backend(*, compiler_config=None, custom_decompositions=None):
    return _ref.get_npu_backend(compiler_config=compiler_config or CompilerConfig(),
                                custom_decompositions=custom_decompositions)
