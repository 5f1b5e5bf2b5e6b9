"""EX-7: the reference's table of GE lowerings, one module per op family.

Each entry maps an ATen operator (or a Python operator on symbolic sizes) to a function ``(builder, node, *args,
**kwargs) -> Value | list[Value]`` that emits the GE op, or small group of ops, upstream TorchAir's converter emits for
it (``torchair/_ge_concrete_graph/ge_converter/aten/<op>.py`` in the torch-npu 2.14.0 wheel), with GE's input order
and attrs. Tensor arguments arrive as ``ge_build.Value``; everything else as traced. Which of upstream's converted
operators the table covers is ``docs/ge-coverage.md`` (generated, ``python -m tests.ge_coverage``).

=============  ======================================================================================================
``arith``      element-wise arithmetic and math, activations, matrix products, layer norm, mean, casts
``compare``    comparisons, logic, ``where`` and ``masked_fill``
``creation``   tensors made from a size and a value (``ones``, ``full``, ``new_ones``, ``scalar_tensor``, ...)
``shapes``     shape and layout: views, transposes, squeezes, slices, splits, concatenation, strides, symbolic sizes
``indexing``   ``select``, ``index``, ``gather``
``reduce``     sums, cumulative sums, softmax
``conv``       convolution, max pooling, inference batch norm
``attention``  scaled-dot-product attention (its math form)
``collective`` c10d's functional collectives
``experts``    Mixture-of-Experts custom ops of libraries (transformers' grouped matmul), keyed by operator name
=============  ======================================================================================================
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import arith, attention, collective, compare, conv, creation, experts, indexing, reduce, shapes

LOWERINGS: dict[Any, Callable[..., Any]] = {
    **arith.TABLE, **compare.TABLE, **creation.TABLE, **shapes.TABLE, **indexing.TABLE, **reduce.TABLE, **conv.TABLE,
    **attention.TABLE, **collective.TABLE, **experts.TABLE}
