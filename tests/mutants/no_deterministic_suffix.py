"""The md5 of <model_info> leaves out the "|npu_deterministic_level=L" suffix (the formula of upstream before
2.14.0)."""

import hashlib

from tests.mutants._base import reference_for
from torchair_ref.inference import paths

BREAKS = ("CC-8",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's

_model_info = paths.model_info


def _model_info_without_level(class_name, module_repr, options, dynamic, tags, *, deterministic_level):
    info = _model_info(class_name, module_repr, options, dynamic, tags, deterministic_level=deterministic_level)
    return info.rsplit("_", 1)[0] + "_" + hashlib.md5((module_repr + options).encode()).hexdigest()


paths.model_info = _model_info_without_level
