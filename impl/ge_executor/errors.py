"""EX-11, IMPL-4: the errors of the project's GE graph executor (``ge_executor``)."""

from __future__ import annotations

__all__ = ["GeExecutorError", "GraphCheckError", "UnsupportedOpError", "UnsupportedDtypeError", "unsupported_dtype",
           "unsupported_op"]


class GeExecutorError(RuntimeError):
    """Base of every error the GE executor raises: the graph cannot be checked or run here."""


class GraphCheckError(GeExecutorError, ValueError):
    """The graph is malformed: an edge that resolves to no op, a cycle, a missing attr, a bad weight file."""


class UnsupportedOpError(GeExecutorError):
    """An op type without a CPU kernel: only CANN/GE can run it, so no output is invented. One message argument, so
    that callers that re-raise ``type(exc)(message)`` (upstream's ``pretty_error_msg``) keep it intact."""


class UnsupportedDtypeError(GeExecutorError, TypeError):
    """A dtype the op's registration does not accept: an NPU would reject the graph, so it is rejected here too."""


def unsupported_op(op_type: str, op_name: str = "") -> UnsupportedOpError:
    """The error for an op type without a kernel, in the words the project uses for everything that needs GE."""
    where = f" (op {op_name!r})" if op_name else ""
    return UnsupportedOpError(f"needs CANN/GE: no CPU kernel for op {op_type}{where}")


def unsupported_dtype(op_type: str, op_name: str, dtype: str, allowed: object, source: str) -> UnsupportedDtypeError:
    """The error for a dtype outside the op's registration, naming op, dtype, the accepted set and its source."""
    return UnsupportedDtypeError(f"op {op_type} ({op_name!r}) does not accept dtype {dtype}; it accepts "
                                 f"{sorted(allowed)} (per {source})")
