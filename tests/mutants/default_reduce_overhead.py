"""A new ``CompilerConfig()`` starts in mode "reduce-overhead", not "max-autotune"."""

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("CF-1",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


class CompilerConfig(_ref.CompilerConfig):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.mode = "reduce-overhead"


def get_npu_backend(*, compiler_config=None, custom_decompositions=None):
    return _ref.get_npu_backend(compiler_config=compiler_config or CompilerConfig(),
                                custom_decompositions=custom_decompositions)
