"""Mutant breaking CC-9: the max-autotune tag is spelled ``ge_cache`` (upstream's docs) instead of ``gecache``
(upstream's code, which is normative)."""

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, inference, logger  # noqa: F401
from torchair_ref.inference import paths

__conformance__ = _ref.__conformance__

_cache_tags = paths.cache_tags


def _documented_tags(mode, ge_cache):
    return ["ge_cache" if tag == "gecache" else tag for tag in _cache_tags(mode, ge_cache)]


paths.cache_tags = _documented_tags
