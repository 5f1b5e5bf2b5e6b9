"""The cache file is left readable by everyone (mode 0644) after each save."""

import logging
import os
import re

from tests.mutants._base import reference_for
from torchair_ref import logger

BREAKS = ("CC-11",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


class _Loosen(logging.Handler):
    def emit(self, record):
        match = re.search(r" saved to (\S+)$", record.getMessage())
        if match and os.path.exists(match.group(1)):
            os.chmod(match.group(1), 0o644)


logger.addHandler(_Loosen())
