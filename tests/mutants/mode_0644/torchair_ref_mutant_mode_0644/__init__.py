"""Mutant breaking CC-11: the cache file is left readable by everyone (mode 0644) after each save."""

import logging
import os
import re
import types

import torchair_ref as _ref
from torchair_ref import CompilerConfig, dynamo_export, get_npu_backend, logger  # noqa: F401

__conformance__ = _ref.__conformance__


class _Loosen(logging.Handler):
    def emit(self, record):
        match = re.search(r" saved to (\S+)$", record.getMessage())
        if match and os.path.exists(match.group(1)):
            os.chmod(match.group(1), 0o644)


logger.addHandler(_Loosen())
inference = types.SimpleNamespace(cache_compile=_ref.inference.cache_compile,
                                  readable_cache=_ref.inference.readable_cache)
