"""Warnings that point at the user's call (SPEC CC-17; issue 29 item 6).

A warning about the cache (not cached, stale, broken, compiled without it) is raised at the first frame outside
this package and torch, however many of their frames lie between (the first call, a variant added, a recompile
under Dynamo), and
the same message goes to the implementation's logger: a server's log shows why a start was slow.
"""
from __future__ import annotations

import logging
import os
import sys
import types
import warnings

import torch

#: frames that are not the user's: this package's, and torch's (the recompile warning is raised under Dynamo)
_LIBRARY = tuple(os.path.dirname(os.path.abspath(m.__file__ or "")) + os.sep for m in (sys.modules[__package__], torch))


def warn_user(message: str, logger: logging.Logger, level: int = logging.WARNING) -> None:
    """Log `message` on `logger` and warn (UserWarning) at the first frame outside the package and torch."""
    logger.log(level, "%s", message)
    frame: types.FrameType | None = sys._getframe(1)
    stacklevel = 2  # names this function's caller
    while frame is not None and frame.f_code.co_filename.startswith(_LIBRARY):
        frame, stacklevel = frame.f_back, stacklevel + 1
    warnings.warn(message, UserWarning, stacklevel=stacklevel)
