"""Mutant breaking CF-3: the export flags are reported by as_dict() (so they would enter the options string)."""

import types

import torchair_ref as _ref
from torchair_ref import dynamo_export, logger  # noqa: F401

__conformance__ = _ref.__conformance__


class CompilerConfig(_ref.CompilerConfig):
    def as_dict(self):
        local, global_ = super().as_dict()
        flags = self.export.experimental
        local["export.experimental.auto_atc_config_generated"] = str(flags.auto_atc_config_generated)
        local["export.experimental.enable_record_nn_module_stack"] = str(flags.enable_record_nn_module_stack)
        return local, global_


def get_npu_backend(*, compiler_config=None, custom_decompositions=None):
    return _ref.get_npu_backend(compiler_config=compiler_config or CompilerConfig(),
                                custom_decompositions=custom_decompositions)


inference = types.SimpleNamespace(cache_compile=_ref.inference.cache_compile,
                                  readable_cache=_ref.inference.readable_cache)
