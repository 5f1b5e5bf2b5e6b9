"""IMPL-4: the error every stand-in raises when it is reached for work that needs CANN or GE."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

__all__ = ["NeedsCANNError", "needs_cann", "unavailable"]


class NeedsCANNError(RuntimeError):
    """A native part of upstream TorchAir (linked against CANN/GE) was reached on a host without CANN."""


def needs_cann(what: str) -> NoReturn:
    """Raise: ``what`` needs CANN/GE, which the CPU adapter replaces and never imitates."""
    raise NeedsCANNError(
        f"{what} needs CANN/GE: torchair_cpu runs upstream TorchAir's Python on CPU with its native modules "
        "replaced; run this on an Ascend host (--impl torchair_npu, tox -e npu)")


def unavailable(qualname: str) -> Callable[..., Any]:
    """A callable standing in for the native ``qualname`` that raises ``NeedsCANNError`` when called."""

    def _raise(*args: Any, **kwargs: Any) -> NoReturn:
        needs_cann(qualname)

    _raise.__name__ = qualname.rsplit(".", 1)[-1]
    _raise.__qualname__ = qualname
    return _raise

