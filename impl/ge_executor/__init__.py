"""EX-11, IMPL-4: the project's GE graph executor, a leaf package shared by the products.

It owns two things and imports none of the products (``torchair_ref``, ``torchair_cpu``, ``torchair_npu``,
``torchair_conformance``; ``tests/test_layers.py`` checks):

- ``ge_executor.ge_ir``: the GE IR message classes (docs/GE_IR.md), built from the compiled descriptor ``ge_ir.desc``
  shipped beside ``ge_ir.proto``, and GE's two numberings of data types. Torch-free.
- the executor: ``load(model)`` checks a serialized ``ModelDef`` (or a parsed ModelDef/GraphDef, from any copy of the
  schema) and returns a ``Graph`` whose ``run(inputs)`` computes its outputs op by op with torch, each op to CANN's
  documented semantics. An op type without a kernel is ``UnsupportedOpError`` ("needs CANN/GE: no CPU kernel for op
  X"), a dtype the op's registration rejects (or inputs of one type variable that differ) ``UnsupportedDtypeError``,
  a result whose shape differs from the static shape the graph describes for it ``ShapeMismatchError``: never more
  lenient or stricter than CANN, and no output is ever invented.

Who uses it: the reference's exporter writes its ``.air`` with these classes and ``inspect --run`` executes it here;
the CPU adapter of upstream (``torchair_cpu``) backs upstream's native graph API with ``load``; the suite's EX-11
checks run every implementation's export here (reading the ``.air`` itself with its own transcription of the schema).

Kernels live in ``ge_executor.kernels``, one module per op family (``kernels/__init__.py`` lists them), and register
with ``@kernel("Type", dtypes=..., source=...)`` (``ge_executor.registry``).

The public names below are resolved on first use (PEP 562), so ``from ge_executor import ge_ir`` imports no torch.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> module that defines it
_SURFACE = {
    "GeExecutorError": "ge_executor.errors",
    "GraphCheckError": "ge_executor.errors",
    "ShapeMismatchError": "ge_executor.errors",
    "UnsupportedDtypeError": "ge_executor.errors",
    "UnsupportedOpError": "ge_executor.errors",
    "Graph": "ge_executor.graph",
    "load": "ge_executor.graph",
    "supported_op_types": "ge_executor.graph",
    "KERNELS": "ge_executor.kernels",
    "kernel": "ge_executor.registry",
}
__all__ = list(_SURFACE)


def __getattr__(name: str) -> Any:
    if name not in _SURFACE:
        raise AttributeError(f"module 'ge_executor' has no attribute {name!r}")
    value = getattr(importlib.import_module(_SURFACE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SURFACE))
