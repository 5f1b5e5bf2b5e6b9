"""EX-4/EX-7 lowerings of collectives and of CPU attention.

Collectives follow the wheel's ``ge_converter/c10d_functional/c10d_functional.py``: ``all_reduce`` ->
``HcomAllReduce`` (attrs ``reduction``, ``group``, ``fusion`` 0, ``fusion_id`` -1), ``wait_tensor`` -> ``Identity``.

``_scaled_dot_product_flash_attention_for_cpu`` is what SDPA becomes when traced on CPU; upstream has no converter
for it (its export of a model with attention fails there), so the reference writes the math form with GE ops:
``BatchMatMulV2(q, k, adj_x2)``, ``Mul`` by the scale, ``Add`` of a causal mask ``Const`` (-inf above the diagonal),
``SoftmaxV2`` over the last axis and ``BatchMatMulV2`` with ``v``. With symbolic sequence lengths the mask is built
in the graph: ``MaskedFill`` of -inf where ``Greater(Range(S) as a row, Range(L) as a column)``.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from ..ge_build import Builder, Value
from .common import out, unsupported

_REDUCTIONS = {"sum": "sum", "min": "min", "max": "max", "product": "prod"}


def all_reduce(b: Builder, node: Any, x: Value, reduce_op: str, group_name: str) -> Value:
    """``_c10d_functional.all_reduce`` -> ``HcomAllReduce``."""
    if reduce_op.lower() not in _REDUCTIONS:
        raise unsupported(node, f"with reduce_op={reduce_op!r}")
    dtype, shape = out(node)
    return b.one("HcomAllReduce", [("x", x)], dtype, shape,
                 {"reduction": _REDUCTIONS[reduce_op.lower()], "group": group_name, "fusion": 0, "fusion_id": -1})


def wait_tensor(b: Builder, node: Any, x: Value) -> Value:
    """``_c10d_functional.wait_tensor`` -> ``Identity``."""
    dtype, shape = out(node)
    return b.one("Identity", [("x", x)], dtype, shape)


def _batch_matmul(b: Builder, x1: Value, x2: Value, adj_x2: bool, shape: tuple[int, ...]) -> Value:
    return b.one("BatchMatMulV2", [("x1", x1), ("x2", x2), ("bias", None), ("offset_w", None)], x1.dtype, shape,
                 {"adj_x1": False, "adj_x2": adj_x2, "offset_x": 0})


def attention(b: Builder, node: Any, q: Value, k: Value, v: Value, dropout_p: float = 0.0, is_causal: bool = False,
              *, attn_mask: Any = None, scale: Any = None) -> list[Value]:
    """CPU SDPA -> softmax(q @ k^T * scale + causal mask) @ v with GE ops (see the module docstring)."""
    if dropout_p or attn_mask is not None:
        raise unsupported(node, "with dropout or an attention mask")
    length, source = q.shape[-2], k.shape[-2]
    scores_shape = (*q.shape[:-1], source)
    scores = _batch_matmul(b, q, k, True, scores_shape)
    factor = float(scale) if scale is not None else 1.0 / math.sqrt(q.shape[-1])
    scores = b.one("Mul", [("x1", scores), ("x2", b.const(factor, q.dtype))], q.dtype, scores_shape)
    if is_causal and -1 in (length, source):
        mask = _causal_mask(b, q, k)
        scores = b.one("MaskedFill", [("x", scores), ("mask", mask), ("value", b.const(float("-inf"), q.dtype))],
                       q.dtype, scores_shape)
    elif is_causal:
        mask = torch.full((length, source), float("-inf")).triu(1)
        scores = b.one("Add", [("x1", scores), ("x2", b.const(mask, q.dtype))], q.dtype, scores_shape)
    probs = b.one("SoftmaxV2", [("x", scores)], q.dtype, scores_shape, {"axes": [-1], "half_to_float": False})
    dtype, shape = out(node, 0)
    return [_batch_matmul(b, probs, v, False, shape)]


def _causal_mask(b: Builder, q: Value, k: Value) -> Value:
    """True above the diagonal of the (L, S) score matrix: column index > row index, from the runtime lengths."""
    def positions(x: Value, axes: list[int]) -> Value:
        shape = b.one("Shape", [("x", x)], torch.int64, (x.rank,), {"dtype": 9})
        size = b.one("Gather", [("x", shape), ("indices", b.const(x.rank - 2, torch.int64))], torch.int64, (),
                     {"validate_indices": True, "batch_dims": 0, "is_preprocessed": False,
                      "negative_index_support": False})
        span = b.one("Range", [("start", b.const(0, torch.int64)), ("limit", size), ("delta", b.const(1, torch.int64))],
                     torch.int64, (x.shape[-2],))
        dims = (x.shape[-2], 1) if axes == [1] else (1, x.shape[-2])
        return b.one("Unsqueeze", [("x", span)], torch.int64, dims, {"axes": axes})

    rows, cols = positions(q, [1]), positions(k, [0])
    return b.one("Greater", [("x1", cols), ("x2", rows)], torch.bool, (q.shape[-2], k.shape[-2]))


TABLE = {
    torch.ops._c10d_functional.all_reduce.default: all_reduce,
    torch.ops._c10d_functional.wait_tensor.default: wait_tensor,
    torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default: attention,
}
