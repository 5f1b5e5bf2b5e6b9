"""EX-7 lowerings of Mixture-of-Experts operators that libraries define as custom ops: transformers' grouped matmul
(``transformers::grouped_mm_fallback``, the expert projections of its ``grouped_mm`` experts implementation, the
default of transformers 5's MoE models such as Mixtral and Qwen2-MoE) -> CANN's ``GroupedMatmul``.

A custom op is not in ``torch.ops`` until its library is imported, and the reference does not import the library:
its entry in ``TABLE`` is keyed by the operator's name (``ge_build`` looks an operator up by object, then by name),
and the lowering checks the operator's schema before it trusts the name.

There is no decomposition to fall back on: the op's registered implementation loops over ``offs.tolist()``, a Python
loop whose trip count and slice bounds are the data, so tracing it would bake the example's routing into the graph.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..op_builder import Builder, Value
from .common import out, unsupported

#: the name ``ge_build`` finds the operator by, and the argument names its schema must have
GROUPED_MM = "transformers.grouped_mm_fallback.default"
_GROUPED_MM_ARGS = ["input", "weight", "offs"]


def _empty(b: Builder, dtype: torch.dtype) -> Value:
    """An empty 1-d tensor of ``dtype``: ``Fill([0], Cast(0.0, dtype))``, what upstream passes for a tensor list the
    call leaves out (grouped_matmul.py:33-37, ``fill_empty_tensorlist``)."""
    zero = b.cast(b.const(0.0, torch.float32), dtype)
    return b.one("Fill", [("dims", b.const([0], torch.int64)), ("value", zero)], dtype, (0,))


def grouped_mm_fallback(b: Builder, node: Any, x: Value, weight: Value, offs: Value) -> Value:
    """``transformers.grouped_mm_fallback(input (S, K), weight (E, K, N), offs (E,))`` -> ``GroupedMatmul``: rows
    ``offs[e-1]:offs[e]`` of ``input`` times ``weight[e]``, in one (S, N) result.

    Upstream has no converter for this operator (it is transformers', not torch's): the lowering writes the op
    upstream's converter of ``npu_grouped_matmul`` writes for the same computation (custom/grouped_matmul.py:256-433),
    one tensor in each of ``x``, ``weight`` and ``y``: attrs ``split_item`` 3, ``group_type`` 0 (groups along M),
    ``group_list_type`` 0 (``group_list`` holds cumulative row counts, as ``offs`` does), ``dtype`` -1, no transposes,
    ``act_type`` 0, ``tuning_config`` [0]; ``group_list`` is ``offs`` cast to int64; the bias, scale, offset and
    antiquant lists each hold one empty tensor of the type upstream gives it (bias float32 for a bfloat16 x, else
    x's; scale uint64; offset float32; antiquant float16), ``per_token_scale`` omitted.

    Departure in what it computes: transformers' implementation leaves rows past ``offs[-1]`` zero, while CANN
    (aclnnGroupedMatmulV4, groupType 0, one tensor each) requires ``offs[-1]`` to equal the row count on Atlas A2/A3
    and leaves those rows undefined elsewhere. ``offs`` is the cumulative expert histogram, which counts every row
    unless expert-parallel sentinels (ids past the last expert) are routed, so a graph that meets such rows fails
    when run (the executor refuses that ``group_list``) instead of computing something else."""
    schema = [a.name for a in node.target._schema.arguments]
    if schema != _GROUPED_MM_ARGS or len(node.target._schema.returns) != 1:
        raise unsupported(node, f"with schema arguments {schema} (transformers' has {_GROUPED_MM_ARGS})")
    if (x.rank, weight.rank, offs.rank) != (2, 3, 1):
        raise unsupported(node, f"with input, weight, offs of ranks {x.rank}, {weight.rank}, {offs.rank} (2, 3, 1)")
    if x.dtype != weight.dtype or x.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        raise unsupported(node, f"with input {x.dtype} and weight {weight.dtype} (one of float32, float16, bfloat16)")
    dtype, shape = out(node)
    bias = _empty(b, torch.float32 if x.dtype == torch.bfloat16 else x.dtype)
    lists = [("x0", x), ("weight0", weight), ("bias0", bias), ("scale0", _empty(b, torch.uint64)),
             ("offset0", _empty(b, torch.float32)), ("antiquant_scale0", _empty(b, torch.float16)),
             ("antiquant_offset0", _empty(b, torch.float16))]
    return b.one("GroupedMatmul", [*lists, ("group_list", b.cast(offs, torch.int64)), ("per_token_scale", None)],
                 dtype, shape, {"split_item": 3, "dtype": -1, "transpose_weight": False, "transpose_x": False,
                                "group_type": 0, "group_list_type": 0, "act_type": 0, "tuning_config": [0]},
                 name="GroupedMatmul")


TABLE: dict[Any, Callable[..., Any]] = {
    GROUPED_MM: grouped_mm_fallback,
}
