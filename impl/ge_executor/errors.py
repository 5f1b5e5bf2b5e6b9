"""EX-11, IMPL-4: the errors of the project's GE graph executor (``ge_executor``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["GeExecutorError", "GraphCheckError", "UnsupportedOpError", "UnsupportedDtypeError", "ShapeMismatchError",
           "unsupported_dtype", "unsupported_op", "mismatched_dtypes"]


class GeExecutorError(RuntimeError):
    """Base of every error the GE executor raises: the graph cannot be checked or run here."""


class GraphCheckError(GeExecutorError, ValueError):
    """The graph is malformed: an edge that resolves to no op, a cycle, a missing attr, a bad weight file."""


class UnsupportedOpError(GeExecutorError):
    """An op type without a CPU kernel: only CANN/GE can run it, so no output is invented. One message argument, so
    that callers that re-raise ``type(exc)(message)`` (upstream's ``pretty_error_msg``) keep it intact."""


class UnsupportedDtypeError(GeExecutorError, TypeError):
    """A dtype the op's registration does not accept: an NPU would reject the graph, so it is rejected here too."""


class ShapeMismatchError(GeExecutorError, ValueError):
    """A result whose shape differs from the static shape the graph describes for it: GE's shape check fails there,
    so the executor never hands on a result of another shape."""


def unsupported_op(op_type: str, op_name: str = "", others: Sequence[str] = ()) -> UnsupportedOpError:
    """The error for an op type without a kernel, in the words the project uses for everything that needs GE;
    ``others``: the graph's other op types without one, so that one run names them all."""
    where = f" (op {op_name!r})" if op_name else ""
    also = f"; the graph also has no CPU kernel for {', '.join(others)}" if others else ""
    return UnsupportedOpError(f"needs CANN/GE: no CPU kernel for op {op_type}{where}{also}")


def unsupported_dtype(op_type: str, op_name: str, dtype: str, allowed: Iterable[str],
                      source: str) -> UnsupportedDtypeError:
    """The error for a dtype outside the op's registration, naming op, dtype, the accepted set and its source."""
    return UnsupportedDtypeError(f"op {op_type} ({op_name!r}) does not accept dtype {dtype}; it accepts "
                                 f"{sorted(allowed)} (per {source})")


def mismatched_dtypes(op_type: str, op_name: str, found: Sequence[tuple[str, str]],
                      source: str) -> UnsupportedDtypeError:
    """The error for inputs that the op's registration types with one type variable but that differ in dtype."""
    listed = ", ".join(f"{name} is {dtype}" for name, dtype in found)
    return UnsupportedDtypeError(f"op {op_type} ({op_name!r}) needs one dtype for {', '.join(n for n, _ in found)} "
                                 f"(one type variable, per {source}), but {listed}: a converter must Cast first")
