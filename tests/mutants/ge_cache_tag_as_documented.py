"""The max-autotune tag is spelled ``ge_cache`` (upstream's docs) instead of ``gecache`` (upstream's code, which is
normative)."""

from tests.mutants._base import reference_for
from torchair_ref.inference import paths

BREAKS = ("CC-9",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's

_cache_tags = paths.cache_tags


def _documented_tags(mode, ge_cache):
    return ["ge_cache" if tag == "gecache" else tag for tag in _cache_tags(mode, ge_cache)]


paths.cache_tags = _documented_tags
