"""The readable output file is left with mode 0644."""

import os

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("RC-3",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def readable_cache(cache_bin, print_output=True, file=None):
    text = _ref.inference.readable_cache(cache_bin, print_output=print_output, file=file)
    if file is not None:
        os.chmod(file, 0o644)
    return text
