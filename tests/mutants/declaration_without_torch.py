"""``__conformance__["versions"]`` leaves out the torch version."""

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("IMPL-2",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's

__conformance__ = {**_ref.__conformance__,
                   "versions": {k: v for k, v in _ref.__conformance__["versions"].items() if k != "torch"}}
