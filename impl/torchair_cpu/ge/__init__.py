"""IMPL-4: the project's GE graph executor: runs a GE ``ModelDef``/``GraphDef`` (shared/GE_IR.md) on CPU tensors.

``load(model)`` checks a serialized ``ModelDef`` (or a parsed ModelDef/GraphDef) and returns a ``Graph`` whose
``run(inputs)`` computes its outputs op by op with torch, each op to CANN's documented semantics. An op type without a
kernel is ``UnsupportedOpError`` ("needs CANN/GE: no CPU kernel for op X"), a dtype the op's registration rejects is
``UnsupportedDtypeError``: no output is ever invented. ``torchair_cpu`` backs upstream's native graph API with it;
the exporter's checks run exported graphs with it.

Kernels register with ``@kernel("Type", dtypes=..., source=...)`` (``torchair_cpu.ge.registry``); a module that holds
kernels is listed in ``KERNEL_MODULES`` below and imported here.
"""

from __future__ import annotations

import importlib

from torchair_cpu.ge.errors import GeExecutorError, GraphCheckError, UnsupportedDtypeError, UnsupportedOpError
from torchair_cpu.ge.graph import STRUCTURAL, Graph, load
from torchair_cpu.ge.registry import KERNELS, kernel

__all__ = ["GeExecutorError", "GraphCheckError", "UnsupportedDtypeError", "UnsupportedOpError", "Graph", "load",
           "KERNELS", "kernel", "supported_op_types"]

#: the modules whose ``@kernel`` functions make up the executor
KERNEL_MODULES = (
    "torchair_cpu.ge.kernels_io",
    "torchair_cpu.ge.kernels_math",
    "torchair_cpu.ge.kernels_shape",
    "torchair_cpu.ge.kernels_nn",
    "torchair_cpu.ge.kernels_export",
)
for _module in KERNEL_MODULES:
    importlib.import_module(_module)


def supported_op_types() -> list:
    """Every GE op type the executor runs: the structural ones and those with a kernel."""
    return sorted({*STRUCTURAL, *KERNELS})
