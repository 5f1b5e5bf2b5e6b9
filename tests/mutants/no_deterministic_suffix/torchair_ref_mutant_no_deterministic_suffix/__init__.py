"""Mutant breaking CC-8: the md5 of <model_info> leaves out the "|npu_deterministic_level=L" suffix (the formula of
upstream before 2.14.0)."""

import hashlib

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, inference, logger  # noqa: F401
from torchair_ref.inference import paths

__conformance__ = _ref.__conformance__

_model_info = paths.model_info


def _model_info_without_level(class_name, module_repr, options, dynamic, tags, *, deterministic_level):
    info = _model_info(class_name, module_repr, options, dynamic, tags, deterministic_level=deterministic_level)
    return info.rsplit("_", 1)[0] + "_" + hashlib.md5((module_repr + options).encode()).hexdigest()


paths.model_info = _model_info_without_level
