"""The partial returned by ``get_npu_backend`` carries a copy of the config, not the config passed."""

import copy
import functools

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("CF-4",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def get_npu_backend(*, compiler_config=None, custom_decompositions=None):
    backend = _ref.get_npu_backend(compiler_config=compiler_config, custom_decompositions=custom_decompositions)
    keywords = dict(backend.keywords, compiler_config=copy.deepcopy(backend.keywords["compiler_config"]))
    return functools.partial(backend.func, *backend.args, **keywords)
