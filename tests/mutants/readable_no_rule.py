"""The readable text lacks its line of 100 '='."""

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("RC-2",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def readable_cache(cache_bin, print_output=True, file=None):
    text = _ref.inference.readable_cache(cache_bin, print_output=False, file=file)
    text = text.replace("=" * 100, "-" * 100)
    if print_output:
        print(text)
    return text
