"""An export leaves Dynamo's config changed (every later compile assumes static shapes)."""

import torch._dynamo

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("EX-10",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def dynamo_export(*args, **kwargs):
    result = _ref.dynamo_export(*args, **kwargs)
    torch._dynamo.config.assume_static_by_default = False
    return result
