"""EX-7 lowering of scaled-dot-product attention, in its math form.

On CPU, ``scaled_dot_product_attention`` is traced as ``aten._scaled_dot_product_flash_attention_for_cpu``. Upstream
has no converter for it, nor for any other SDPA operator: ``_scaled_dot_product_flash_attention`` and
``_scaled_dot_product_efficient_attention`` are registered only to raise NotImplementedError
(``ge_converter/aten/_scaled_dot_product_flash_attention.py:5-19``,
``_scaled_dot_product_efficient_attention.py:5-18``), so upstream's export of any model with attention fails on
CPU. The reference writes the math form instead (PyTorch's ``_scaled_dot_product_attention_math``), with the GE
ops upstream's own converters emit for its ATen operators: ``BatchMatMulV2(q, k, adj_x2)``, ``Mul`` by the scale,
the mask (below), ``SoftmaxV2`` over the last axis and ``BatchMatMulV2`` with ``v``. Why not NPU's fused attention
ops (``PromptFlashAttention``, ``FusedInferAttentionScore``, which torch-npu's own SDPA reaches on a device): their
masks mean the opposite of torch's (true masks out), they take layouts and head counts as attrs and CANN documents
them per chip; the math form has exact, documented semantics on every GE, which is what an export run elsewhere
needs.

The mask: a bool ``attn_mask`` keeps the scores where it is true and puts -inf elsewhere (``SelectV2(mask, scores,
-inf)``, where.py's op); a float one is added (``Add``); ``is_causal`` adds a ``Const`` of -inf above the diagonal,
or, with symbolic sequence lengths, ``MaskedFill`` of -inf where ``Greater(Range(S) as a row, Range(L) as a
column)``. Dropout, and a mask together with ``is_causal`` (which PyTorch itself rejects), are refused.

Grouped-query attention: the CPU op takes fewer key/value heads than query heads when they divide them (torch 2.14's
``enable_gqa``, which transformers uses for Falcon's one key head): query head ``h`` attends key/value head
``h // (heads / key heads)``, as ``repeat_interleave`` along the head axis would make them. The reference gathers
the key and value heads in that order (``GatherV2`` along the head axis with a constant index), so that the math
form above sees as many heads in each.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from ..op_builder import Builder, Value
from .common import GATHER_ATTRS, dim_size, out, unsupported


def _batch_matmul(b: Builder, x1: Value, x2: Value, adj_x2: bool, shape: tuple[int, ...]) -> Value:
    return b.one("BatchMatMulV2", [("x1", x1), ("x2", x2), ("bias", None), ("offset_w", None)], x1.dtype, shape,
                 {"adj_x1": False, "adj_x2": adj_x2, "offset_x": 0})


def attention(b: Builder, node: Any, q: Value, k: Value, v: Value, dropout_p: float = 0.0, is_causal: bool = False,
              *, attn_mask: Value | None = None, scale: Any = None) -> list[Value]:
    """CPU SDPA -> softmax(q @ k^T * scale + mask) @ v with GE ops (see the module docstring)."""
    if dropout_p:
        raise unsupported(node, f"with dropout_p={dropout_p}")
    if is_causal and attn_mask is not None:
        raise unsupported(node, "with both an attention mask and is_causal")
    if k.shape[-3:-2] != q.shape[-3:-2] and -1 not in (*k.shape[-3:-2], *q.shape[-3:-2]):
        heads, kv_heads = q.shape[-3], k.shape[-3]
        if heads % kv_heads or v.shape[-3] != kv_heads:
            raise unsupported(node, f"with {kv_heads} key and {v.shape[-3]} value heads for {heads} query heads")
        k, v = (_repeat_heads(b, x, heads // kv_heads) for x in (k, v))
    length, source = q.shape[-2], k.shape[-2]
    scores_shape = (*q.shape[:-1], source)
    scores = _batch_matmul(b, q, k, True, scores_shape)
    scores = b.one("Mul", [("x1", scores), ("x2", _scale(b, q, scale))], q.dtype, scores_shape)
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        scores = b.one("SelectV2", [("condition", attn_mask), ("then", scores),
                                    ("else", b.const(float("-inf"), q.dtype))], q.dtype, scores_shape)
    elif attn_mask is not None:
        scores = b.one("Add", [("x1", scores), ("x2", b.cast(attn_mask, q.dtype))], q.dtype, scores_shape)
    elif is_causal and -1 in (length, source):
        mask = _causal_mask(b, q, k)
        scores = b.one("MaskedFill", [("x", scores), ("mask", mask), ("value", b.const(float("-inf"), q.dtype))],
                       q.dtype, scores_shape)
    elif is_causal:
        causal = torch.full((length, source), float("-inf")).triu(1)
        scores = b.one("Add", [("x1", scores), ("x2", b.const(causal, q.dtype))], q.dtype, scores_shape)
    probs = b.one("SoftmaxV2", [("x", scores)], q.dtype, scores_shape, {"axes": [-1], "half_to_float": False})
    dtype, shape = out(node, 0)
    return [_batch_matmul(b, probs, v, False, shape)]


def _repeat_heads(b: Builder, x: Value, group: int) -> Value:
    """x's heads (axis -3) each repeated ``group`` times in place: ``GatherV2`` with index ``h // group``."""
    heads = x.shape[-3] * group
    index = b.const([h // group for h in range(heads)], torch.int64)
    return b.one("GatherV2", [("x", x), ("indices", index), ("axis", b.const(x.rank - 3, torch.int64))], x.dtype,
                 (*x.shape[:-3], heads, *x.shape[-2:]), dict(GATHER_ATTRS))


def _scale(b: Builder, q: Value, scale: Any) -> Value:
    """The scores' factor: ``scale``, else 1 / sqrt(head size); a symbolic head size's from the runtime shape
    (``Rsqrt`` of ``Gather(Shape(q), -1)`` in q's dtype)."""
    if scale is not None or q.shape[-1] != -1:
        return b.const(float(scale) if scale is not None else 1.0 / math.sqrt(q.shape[-1]), q.dtype)
    size = dim_size(b, q, q.rank - 1)
    return b.one("Rsqrt", [("x", b.cast(size, q.dtype))], q.dtype, ())


def _causal_mask(b: Builder, q: Value, k: Value) -> Value:
    """True above the diagonal of the (L, S) score matrix: column index > row index, from the runtime lengths."""
    def positions(x: Value, axes: list[int]) -> Value:
        size = dim_size(b, x, x.rank - 2)
        span = b.one("Range", [("start", b.const(0, torch.int64)), ("limit", size), ("delta", b.const(1, torch.int64))],
                     torch.int64, (x.shape[-2],))
        dims = (x.shape[-2], 1) if axes == [1] else (1, x.shape[-2])
        return b.one("Unsqueeze", [("x", span)], torch.int64, dims, {"axes": axes})

    rows, cols = positions(q, [1]), positions(k, [0])
    return b.one("Greater", [("x1", cols), ("x2", rows)], torch.bool, (q.shape[-2], k.shape[-2]))


TABLE: dict[Any, Callable[..., Any]] = {
    torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default: attention,
}
