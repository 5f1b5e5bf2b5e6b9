"""Mutant breaking CF-4: the partial returned by ``get_npu_backend`` carries a copy of the config, not the config
passed."""

import copy
import functools

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, inference, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def get_npu_backend(*, compiler_config=None, custom_decompositions=None):
    backend = _ref.get_npu_backend(compiler_config=compiler_config, custom_decompositions=custom_decompositions)
    keywords = dict(backend.keywords, compiler_config=copy.deepcopy(backend.keywords["compiler_config"]))
    return functools.partial(backend.func, *backend.args, **keywords)
