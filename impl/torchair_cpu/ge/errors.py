"""IMPL-4: the errors of the project's GE graph executor (``torchair_cpu.ge``)."""

from __future__ import annotations

__all__ = ["GeExecutorError", "GraphCheckError", "UnsupportedOpError", "UnsupportedDtypeError"]


class GeExecutorError(RuntimeError):
    """Base of every error the GE executor raises: the graph cannot be checked or run here."""


class GraphCheckError(GeExecutorError, ValueError):
    """The graph is malformed: an edge that resolves to no op, a cycle, a missing attr, a bad weight file."""


class UnsupportedOpError(GeExecutorError):
    """An op type without a CPU kernel: only CANN/GE can run it, so no output is invented."""

    def __init__(self, op_type: str, op_name: str = "") -> None:
        where = f" (op {op_name!r})" if op_name else ""
        super().__init__(f"needs CANN/GE: no CPU kernel for op {op_type}{where}")
        self.op_type = op_type


class UnsupportedDtypeError(GeExecutorError, TypeError):
    """A dtype the op's registration does not accept: an NPU would reject the graph, so it is rejected here too."""

    def __init__(self, op_type: str, op_name: str, dtype: str, allowed: object, source: str) -> None:
        super().__init__(
            f"op {op_type} ({op_name!r}) does not accept dtype {dtype}; it accepts {sorted(allowed)} "
            f"(per {source})")
        self.op_type, self.dtype = op_type, dtype
