"""EX-11, IMPL-4: the GE executor's kernels, one module per op family.

The families follow the reference's lowering (``torchair_ref/export/lowering/``: ``arith``, ``shapes``,
``collective``), split finer where an op family will grow on its own: a GE op type that a lowering emits has its kernel
in the module of its family here, so adding a GE op means one lowering and one kernel in its family.

=============  ======================================================================================================
``io``         values from the graph itself: ``Const``, ``FileConstant``
``arith``      element-wise arithmetic, comparisons, logic, casts, complex parts
``activation`` element-wise activations (``Relu``, ``Gelu``, ``GeluV2``, ``Swish``, ...)
``reduce``     reductions over axes (``ReduceSum``, ``ReduceMean``, ...), sorting and counting (``Sort``, ``Histogram``)
``shapes``     shape and layout: reshape, transpose, broadcast, concat, split, pack, shape, range, copies
``indexing``   selecting elements: gathers, strided slices, masked fills; writing them (``TensorScatterUpdate``)
``matmul``     matrix products (``MatMul``, ``MatMulV2``, ``BatchMatMul``, ``BatchMatMulV2``, ``GroupedMatmul``)
``norm``       normalisations (``LayerNormV4``, ``SoftmaxV2``, ``BNInfer``)
``conv``       convolutions (``Conv2D``)
``pooling``    pooling windows (``MaxPoolWithArgmaxV1``)
``collective`` collectives between ranks, through ``torch.distributed`` (``HcomAllReduce``, ``HcomAllGather``,
               ``HcomReduceScatter``, ``HcomAllToAllV``)
=============  ======================================================================================================

A family to come takes its own module and a line in ``FAMILIES`` (attention is the math form of ``matmul``, ``arith``
and ``norm`` ops: the reference's exporter writes no fused attention op).
Importing this package imports every family, so ``KERNELS`` is complete.
"""

from __future__ import annotations

import importlib

from ge_executor.registry import KERNELS

__all__ = ["FAMILIES", "KERNELS"]

#: the modules whose ``@kernel`` functions make up the executor
FAMILIES = ("io", "arith", "activation", "reduce", "shapes", "indexing", "matmul", "norm", "conv", "pooling",
            "collective")

for _family in FAMILIES:
    importlib.import_module(f"{__name__}.{_family}")
