"""EX-11, IMPL-4: the GE executor's kernels, one module per op family.

The families follow the reference's lowering (``torchair_ref/export/lowering/``: ``arith``, ``shapes``,
``collective``), split finer where an op family will grow on its own: a GE op type that a lowering emits has its kernel
in the module of its family here, so adding a GE op means one lowering and one kernel in its family.

=============  ======================================================================================================
``io``         values from the graph itself: ``Const``, ``FileConstant``
``arith``      element-wise arithmetic, comparisons, logic, casts, complex parts
``activation`` element-wise activations (``Relu``, ``Gelu``, ``GeluV2``, ``Swish``, ...)
``reduce``     reductions over axes (``ReduceSum``, ``ReduceMean``, ...)
``shapes``     shape and layout: reshape, transpose, broadcast, concat, split, pack, shape, range, copies
``indexing``   selecting elements: gathers, strided slices, masked fills
``matmul``     matrix products (``MatMul``, ``MatMulV2``, ``BatchMatMul``, ``BatchMatMulV2``)
``norm``       normalisations (``LayerNormV4``, ``SoftmaxV2``; batch norm belongs here)
``collective`` collectives between ranks, through ``torch.distributed`` (``HcomAllReduce``)
=============  ======================================================================================================

Families to come take their own module (``conv``, ``pooling``, ``attention``) and a line in ``FAMILIES``.
Importing this package imports every family, so ``KERNELS`` is complete.
"""

from __future__ import annotations

import importlib

from ge_executor.registry import KERNELS

__all__ = ["FAMILIES", "KERNELS"]

#: the modules whose ``@kernel`` functions make up the executor
FAMILIES = ("io", "arith", "activation", "reduce", "shapes", "indexing", "matmul", "norm", "collective")

for _family in FAMILIES:
    importlib.import_module(f"{__name__}.{_family}")
