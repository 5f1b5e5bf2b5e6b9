"""Small models, one or a few ATen operators each, for the reference's lowering tests: the model, its inputs and the
GE op types upstream's converter writes for the operator (``tests/reference/test_export_lowerings.py``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from tests.reference.export.grouped_mm import grouped_mm


class Fn(nn.Module):
    """``forward`` is ``fn``; ``weights`` become parameters (a model's own weights, as the exporter sees them)."""

    def __init__(self, fn: Callable[..., Any], **weights: torch.Tensor) -> None:
        super().__init__()
        self.fn = fn
        for name, value in weights.items():
            self.register_parameter(name, nn.Parameter(value, requires_grad=False))

    def forward(self, *args: Any) -> Any:
        return self.fn(self, *args)


@dataclass
class Case:
    """One lowering case: the model, its example inputs and the GE op types its graph must hold."""

    name: str
    model: nn.Module
    inputs: tuple
    ge_types: set[str]
    dynamic: bool = False
    extra: dict = field(default_factory=dict)


def _gqa_from_hidden(m: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Grouped-query attention over hidden states (batch, sequence, 48), as a model computes it: 4 query heads and 2
    key/value heads of 8, so that with symbolic batch and sequence sizes the head counts stay constants."""
    batch, length = x.shape[0], x.shape[1]
    q = x[..., :32].reshape(batch, length, 4, 8).transpose(1, 2)
    k = x[..., 32:48].reshape(batch, length, 2, 8).transpose(1, 2)
    return F.scaled_dot_product_attention(q, k, k * 2, is_causal=True, enable_gqa=True)


def _g(seed: int, *shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        return torch.randn(*shape, generator=gen).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    return torch.randint(-5, 6, shape, generator=gen).to(dtype)


X, Y = _g(1, 2, 3, 4), _g(2, 2, 3, 4)
N, M = _g(3, 2, 3, dtype=torch.int64), _g(4, 2, 3, dtype=torch.int64)
B, C = _g(5, 2, 3, dtype=torch.bool), _g(6, 2, 3, dtype=torch.bool)
IMAGE = _g(7, 2, 4, 9, 9)
PICK = N.abs() % 2  # indices in range for a dim of 2
ROWS = torch.tensor([1, -2])  # rows 1 and 0 of a dim of 2 or 3, the second counted from the end
TWICE = torch.tensor([1, -2, 1])  # the same with row 1 twice


def set_rows(x: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
    """``y[i] = 0.5``: an index_put of a scalar, broadcast to the indexed rows (symbolic with dynamic=True)."""
    y = x * 2
    y[i] = 0.5
    return y


def _set_columns(x: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
    """``y[:, i] = ...``: an index_put whose index follows a dim left whole."""
    y = x.clone()
    y[:, i] = x[:, :2]
    return y


def _inverse_permutation(x: torch.Tensor) -> torch.Tensor:
    """transformers' grouped-matmul experts: sort, then invert the permutation through an index_put."""
    order = torch.sort(x.reshape(-1)).indices
    inverse = torch.empty_like(order)
    inverse[order] = torch.arange(order.numel())
    return inverse


def cases() -> list[Case]:
    """Every case, built fresh (models hold their own weights)."""
    gmm = grouped_mm()
    return [
        # arith: arith.py
        Case("sub-alpha", Fn(lambda m, x, y: torch.sub(x, y, alpha=2)), (X, Y), {"Sub", "Mul"}),
        Case("div-int", Fn(lambda m, a, b: a / (b.abs() + 1)), (N, M), {"RealDiv", "Cast"}),
        Case("minimum", Fn(lambda m, x, y: torch.minimum(x, y)), (X, Y), {"Minimum"}),
        Case("minimum-int16", Fn(lambda m, a, b: torch.minimum(a.to(torch.int16), b.to(torch.int16))), (N, M),
             {"Minimum", "Cast"}),
        Case("minimum-bool", Fn(lambda m, a, b: torch.minimum(a, b)), (B, C), {"Mul"}),
        Case("maximum", Fn(lambda m, x, y: torch.maximum(x, y)), (X, Y), {"Maximum"}),
        Case("unary-math", Fn(lambda m, x: (x.abs() + 1).log() + x.cos() * x.sin() + x.exp() + (x.abs() + 1).sqrt()),
             (X,), {"Abs", "Log", "Cos", "Sin", "Exp", "Sqrt"}),
        Case("abs-uint8", Fn(lambda m, a: a.to(torch.uint8).abs()), (N.abs(),), {"Cast"}),
        Case("hard-activations", Fn(lambda m, x: F.hardsigmoid(3 * x) + F.hardswish(3 * x)), (X,),
             {"HardSigmoid", "HardSwish"}),
        Case("bmm", Fn(lambda m, x, y: torch.bmm(x, y.transpose(1, 2))), (X, Y), {"BatchMatMul"}),
        Case("baddbmm", Fn(lambda m, x, y, z: torch.baddbmm(z[:, :, :3], x, y.transpose(1, 2), beta=2, alpha=0.5)),
             (X, Y, _g(23, 2, 3, 5)), {"BatchMatMul", "Mul", "Add"}),
        Case("pow-tensor", Fn(lambda m, x, a: (torch.pow(x.abs() + 1, x), torch.pow(torch.tensor(2.0), a))), (X, N),
             {"Pow", "Cast"}),
        Case("mul-scalar", Fn(lambda m, x, a: (torch.ops.aten.mul.Scalar(x, 0.5), torch.ops.aten.mul.Scalar(a, 3))),
             (X, N), {"Mul"}),
        # compare: compare.py
        Case("le-tensor", Fn(lambda m, a, b: a <= b), (N, M), {"LessEqual"}),
        Case("le-bool", Fn(lambda m, a, b: a <= b), (B, C), {"LessEqual", "Cast"}),
        Case("le-scalar", Fn(lambda m, a: a <= 0.5), (N,), {"LessEqual", "Cast"}),
        Case("lt-scalar", Fn(lambda m, a: a < 2), (N,), {"Less"}),
        Case("gt-mixed", Fn(lambda m, a, x: a > x[:, :, 0]), (N, X), {"Greater", "Cast"}),
        Case("gt-scalar", Fn(lambda m, x: x > 0.25), (X,), {"Greater"}),
        Case("ge-scalar", Fn(lambda m, a: a >= 1), (N,), {"GreaterEqual"}),
        Case("ne", Fn(lambda m, a, b, x: (a != b, a != 1, x != 0.5, a != x[:, :, 0])), (N, M, X),
             {"NotEqual", "Cast"}),
        Case("and-bool", Fn(lambda m, a, b: a & b), (B, C), {"LogicalAnd"}),
        Case("and-int", Fn(lambda m, a, b: a & b), (N, M), {"BitwiseAnd"}),
        Case("not", Fn(lambda m, a, b: (~a, ~b)), (B, N), {"LogicalNot", "Invert"}),
        Case("where", Fn(lambda m, c, x, a: torch.where(c, x[:, :, 0], a)), (B, X, N), {"SelectV2", "Cast"}),
        Case("masked-fill", Fn(lambda m, x, c: x[:, :, 0].masked_fill(c, -1.5)), (X, B), {"MaskedFill"}),
        # creation: creation.py
        Case("ones-zeros", Fn(lambda m, x: x + torch.ones(3, 4) + torch.zeros(4, dtype=torch.float32)), (X,),
             {"Fill"}),
        Case("new-ones-bool", Fn(lambda m, x: x.new_ones((3, 4), dtype=torch.bool) & (x[0] > 0)), (X,),
             {"Fill", "Cast"}),
        Case("new-zeros-full", Fn(lambda m, x: x.new_zeros(4) + x.new_full((3, 4), 2.5) + torch.full((4,), 3.0)),
             (X,), {"Fill"}),
        Case("full-like", Fn(lambda m, a: torch.full_like(a, 7, dtype=torch.float32)), (N,), {"Fill", "Shape"}),
        Case("scalar-tensor", Fn(lambda m, x: torch.where(x > 0, torch.scalar_tensor(0.0),
                                                          torch.scalar_tensor(float("-inf")))), (X,), {"SelectV2"}),
        # shapes: shapes.py
        Case("permute", Fn(lambda m, x: x.permute(2, 0, 1)), (X,), {"Transpose"}),
        Case("permute-ones", Fn(lambda m, x: x.reshape(2, 12, 1, 1).permute(0, 2, 3, 1)), (X,),
             {"Squeeze", "Unsqueeze"}),
        Case("squeeze-dim", Fn(lambda m, x: (x[:, :1].squeeze(1), x.squeeze(1))), (X,), {"Squeeze", "Identity"}),
        Case("unbind", Fn(lambda m, x: torch.unbind(x, 1)), (X,), {"Unpack"}),
        # expand's -1 on a symbolic dim: that dim of the input, read at run time
        Case("expand-symbolic", Fn(lambda m, x: x.unsqueeze(1).expand(-1, 3, -1) * 2), (_g(30, 4, 5),),
             {"BroadcastTo", "Shape", "Gather", "Pack"}, dynamic=True),
        Case("stack", Fn(lambda m, x, y: torch.stack([x, y], dim=-1)), (X, Y), {"Pack"}),
        Case("as-strided", Fn(lambda m, x: (x * 2).as_strided((2, 3), (12, 1), 1)), (X,), {"AsStrided"}),
        Case("as-strided-wide", Fn(lambda m, x: (x.reshape(2, 320) + 1).as_strided((2, 320, 1, 1),
                                                                              (320, 1, 320, 320))),
             (_g(8, 2, 20, 16),), {"AsStrided", "Transpose"}),
        Case("tril", Fn(lambda m, x: (torch.tril(x, -1), torch.tril(torch.ones(4, 4, dtype=torch.bool)))), (X,),
             {"Tril", "Cast"}),
        Case("arange-start", Fn(lambda m, x: x + torch.arange(1, 5) + torch.arange(-2, 2, dtype=torch.int32)), (X,),
             {"Range", "Cast"}),
        Case("split-with-sizes", Fn(lambda m, x: torch.split(x * 2, [1, 3], dim=2)), (X,), {"SplitV"}),
        Case("floor-divide", Fn(lambda m, a, b: (a // 2, torch.floor_divide(a, b.abs() + 1))), (N, M), {"FloorDiv"}),
        Case("empty-like-index-put", Fn(lambda m, x: _inverse_permutation(x)), (X,),
             {"Sort", "Fill", "Shape", "TensorScatterUpdate"}),
        # indexing: indexing.py
        Case("select", Fn(lambda m, x: x[:, -1] + x[1, 0]), (X,), {"GatherV2"}),
        Case("index", Fn(lambda m, x, i: x[i]), (X, PICK), {"IndexByTensor"}),
        Case("index-bool-x", Fn(lambda m, c, i: c[i]), (B, PICK), {"IndexByTensor", "Cast"}),
        Case("gather", Fn(lambda m, x, i: torch.gather(x[:, :, 0], 1, i)), (X, PICK), {"GatherElements"}),
        Case("index-put", Fn(lambda m, x, i, v: (x.index_put((i,), v), x.index_put((i,), v[0, 0]))),
             (X, ROWS, _g(24, 2, 3, 4)), {"TensorScatterUpdate", "Unsqueeze", "SelectV2", "BroadcastTo"}),
        Case("index-put-accumulate", Fn(lambda m, x, i, v: x.index_put((i, i), v, accumulate=True)),
             (X, TWICE, _g(25, 3, 4)), {"TensorScatterAdd", "Pack"}),
        Case("index-put-dynamic", Fn(lambda m, x, i, v: x.index_put((i,), v)), (X, ROWS, _g(24, 2, 3, 4)),
             {"TensorScatterUpdate", "Shape", "Gather"}, dynamic=True),
        Case("index-put-scalar-dynamic", Fn(lambda m, x, i: set_rows(x, i)), (X, ROWS),
             {"TensorScatterUpdate", "BroadcastTo", "Pack", "Shape", "Gather"}, dynamic=True),
        # reduce: reduce.py
        Case("sum", Fn(lambda m, x: (x.sum(), x.sum((0, 2), keepdim=True))), (X,), {"ReduceSum"}),
        Case("cumsum", Fn(lambda m, a: torch.cumsum(a, 1)), (N,), {"Cumsum"}),
        Case("softmax", Fn(lambda m, x: x.softmax(-1) + x.softmax(0)), (X,), {"SoftmaxV2"}),
        Case("safe-softmax", Fn(lambda m, x: torch.ops.aten._safe_softmax(
            x.masked_fill(torch.tensor([[True], [False], [True]]), float("-inf")), -1)), (X,),
             {"SoftmaxV2", "ReduceMax", "SelectV2"}),
        Case("safe-softmax-dtype", Fn(lambda m, x, a: (torch.ops.aten._safe_softmax(x, 0, torch.float64),
                                                       torch.ops.aten._safe_softmax(a, -1, torch.float32))), (X, N),
             {"SoftmaxV2", "Cast"}),
        Case("topk", Fn(lambda m, x: (*torch.topk(x, 2), *torch.topk(x * 3, 3, dim=2, largest=False))), (X,),
             {"TopKV2", "Cast"}),
        Case("topk-not-last", Fn(lambda m, x: torch.topk(x, 2, dim=1)), (X,), {"TopKV2", "Transpose", "Cast"}),
        Case("sort", Fn(lambda m, x: (*torch.sort(x), *torch.sort(x, dim=1, descending=True))), (X,),
             {"Sort", "Transpose", "Cast"}),
        Case("histc", Fn(lambda m, x: (torch.histc(x, bins=5, min=-1.0, max=1.0), torch.histc(x.half(), bins=3),
                                       torch.histc(x.bfloat16(), bins=4, min=-2, max=2))), (X,),
             {"Histogram", "Cast"}),
        # experts: experts.py
        Case("grouped-mm", Fn(lambda m, x, offs: gmm(x, m.w, offs), w=_g(26, 3, 4, 5)),
             (_g(27, 6, 4), torch.tensor([2, 2, 6], dtype=torch.int32)), {"GroupedMatmul", "Fill", "Cast"}),
        # conv: conv.py
        Case("conv2d", Fn(lambda m, x: F.conv2d(x, m.w, m.b, stride=2, padding=1, groups=2), w=_g(9, 6, 2, 3, 3),
                          b=_g(10, 6)), (IMAGE,), {"Conv2D"}),
        Case("conv1d", Fn(lambda m, x: F.conv1d(x, m.w, None, padding=1), w=_g(11, 5, 4, 3)), (_g(12, 2, 4, 10),),
             {"Conv2D", "Unsqueeze", "Squeeze"}),
        Case("max-pool", Fn(lambda m, x: F.max_pool2d(x, 3, 2, 1, return_indices=True)), (IMAGE,),
             {"MaxPoolWithArgmaxV1", "Cast"}),
        Case("batch-norm", Fn(lambda m, x: F.batch_norm(x, m.mean, m.var.abs(), m.w, m.b, False, 0.1, 1e-5),
                              mean=_g(13, 4), var=_g(14, 4), w=_g(15, 4), b=_g(16, 4)), (IMAGE,), {"BNInfer"}),
        Case("batch-norm-2d", Fn(lambda m, x: F.batch_norm(x, m.mean, m.var.abs(), m.w, m.b, False, 0.1, 1e-5),
                                 mean=_g(13, 4), var=_g(14, 4), w=_g(15, 4), b=_g(16, 4)), (_g(17, 3, 4),),
             {"BNInfer", "Unsqueeze", "Squeeze"}),
        # attention: attention.py
        Case("sdpa-bool-mask", Fn(lambda m, q, k, mask: F.scaled_dot_product_attention(q, k, k, attn_mask=mask)),
             (_g(18, 2, 2, 5, 8), _g(19, 2, 2, 6, 8), _g(20, 5, 6, dtype=torch.bool) | torch.eye(5, 6).bool()),
             {"BatchMatMulV2", "SelectV2", "SoftmaxV2"}),
        Case("sdpa-float-mask", Fn(lambda m, q, k, mask: F.scaled_dot_product_attention(q, k, k, attn_mask=mask)),
             (_g(18, 2, 2, 5, 8), _g(19, 2, 2, 6, 8), _g(21, 2, 1, 5, 6)), {"BatchMatMulV2", "Add", "SoftmaxV2"}),
        Case("sdpa-causal", Fn(lambda m, q: F.scaled_dot_product_attention(q, q, q, is_causal=True)),
             (_g(18, 2, 2, 5, 8),), {"BatchMatMulV2", "SoftmaxV2"}),
        Case("sdpa-causal-dynamic", Fn(lambda m, q: F.scaled_dot_product_attention(q, q, q, is_causal=True)),
             (_g(18, 2, 2, 5, 8),), {"BatchMatMulV2", "MaskedFill", "Range", "Rsqrt", "SoftmaxV2"}, dynamic=True),
        # grouped-query attention (Falcon's one key head; Llama-style groups): key/value heads gathered per group
        Case("sdpa-gqa-one-key-head", Fn(lambda m, q, k, v: F.scaled_dot_product_attention(
            q, k, v, is_causal=True, enable_gqa=True)), (_g(18, 2, 4, 5, 8), _g(19, 2, 1, 5, 8), _g(20, 2, 1, 5, 8)),
             {"BatchMatMulV2", "GatherV2", "SoftmaxV2"}),
        Case("sdpa-gqa-groups", Fn(lambda m, q, k, v, mask: F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, enable_gqa=True)),
             (_g(18, 2, 6, 5, 8), _g(19, 2, 3, 7, 8), _g(20, 2, 3, 7, 8), _g(21, 2, 1, 5, 7)),
             {"BatchMatMulV2", "GatherV2", "Add", "SoftmaxV2"}),
        Case("sdpa-gqa-dynamic", Fn(_gqa_from_hidden), (_g(20, 2, 5, 48),),
             {"BatchMatMulV2", "GatherV2", "MaskedFill", "SoftmaxV2"}, dynamic=True),
    ]


REFUSED = [
    ("as-strided-of-a-view", Fn(lambda m, x: x.transpose(0, 2).as_strided((2, 2), (1, 2))), (X,),
     "not contiguous from offset 0"),
    ("arange-float", Fn(lambda m, x: x + torch.arange(0.5, 4.5)), (X,), "not integers"),
    ("arange-past-int32", Fn(lambda m, x: x + torch.arange(2**31, 2**31 + 4)), (X,), "beyond int32"),
    ("histc-float64", Fn(lambda m, x: torch.histc(x.double(), bins=3)), (X,), "float64"),
    ("histc-one-point", Fn(lambda m, x: torch.histc(x, bins=3, min=1.0, max=1.0)), (X,), "min=1.0"),
    ("index-put-after-whole-dim", Fn(lambda m, x, i: _set_columns(x, i)), (X, ROWS), "left whole"),
    ("index-put-accumulate-int64", Fn(lambda m, a, i: a.index_put((i,), a[:2], accumulate=True)), (N, ROWS),
     "accumulate=True"),
    ("conv-transposed", Fn(lambda m, x: F.conv_transpose2d(x, m.w), w=_g(22, 4, 2, 3, 3)), (IMAGE,), "transposed"),
]
