"""The export flags are reported by as_dict() (so they would enter the options string)."""

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("CF-3",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


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
