"""EX-11, IMPL-4: GE matrix-product kernels (CANN semantics: transposes as attrs, bias as an optional input, no
quantisation offset), and ``GroupedMatmul``, a matrix product per group of rows (Mixture-of-Experts experts)."""

from __future__ import annotations

import torch

from ge_executor.registry import FLOATS, RAW_OPS, OpView, kernel, required

_DYNAMIC = "torch_npu-2.14.0 torchair/_ge_concrete_graph/dynamic_output_ops.py"
_GMM_DOC = "CANN ops-transformer gmm/grouped_matmul/docs/aclnnGroupedMatmulV4.md"

_MM = FLOATS | {"DT_INT32"}  # the float and int32 entries; int8/int4 need quantisation offsets (offset_w)


def _matmul(x1: torch.Tensor, x2: torch.Tensor, bias: torch.Tensor | None, t1: bool, t2: bool,
            op: OpView) -> torch.Tensor:
    if x1.dim() < 2 or x2.dim() < 2:
        raise op.fail(f"inputs must be at least 2-d, got {list(x1.shape)} and {list(x2.shape)}")
    a = x1.transpose(-1, -2) if t1 else x1
    b = x2.transpose(-1, -2) if t2 else x2
    if a.shape[-1] != b.shape[-2]:
        raise op.fail(f"inner dims differ: {list(a.shape)} @ {list(b.shape)}")
    out = torch.matmul(a, b)
    return out if bias is None else out + bias


def _no_offset(op: OpView, inputs: list[torch.Tensor | None]) -> None:
    if len(inputs) > 3 and inputs[3] is not None:
        raise op.fail("offset_w (an int8 quantisation offset) is not supported")


@kernel("MatMul", dtypes=_MM, source=f"{RAW_OPS}:38167 REG_OP(MatMul)")
def mat_mul(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """2-d x1 @ x2 (each transposed by ``transpose_x1``/``transpose_x2``) + optional bias."""
    bias = inputs[2] if len(inputs) > 2 else None
    x1, x2 = required(op, inputs, 0), required(op, inputs, 1)
    return _matmul(x1, x2, bias, op.b("transpose_x1", False), op.b("transpose_x2", False), op)


@kernel("MatMulV2", dtypes=_MM, source=f"{RAW_OPS}:38228 REG_OP(MatMulV2)")
def mat_mul_v2(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """As MatMul, with an optional offset_w that must be absent here."""
    _no_offset(op, inputs)
    bias = inputs[2] if len(inputs) > 2 else None
    x1, x2 = required(op, inputs, 0), required(op, inputs, 1)
    return _matmul(x1, x2, bias, op.b("transpose_x1", False), op.b("transpose_x2", False), op)


@kernel("BatchMatMul", dtypes=_MM, source=f"{RAW_OPS}:38433 REG_OP(BatchMatMul)")
def batch_mat_mul(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """Batched x1 @ x2 with broadcast batch dims, last two dims transposed by ``adj_x1``/``adj_x2``."""
    x1, x2 = required(op, inputs, 0), required(op, inputs, 1)
    return _matmul(x1, x2, None, op.b("adj_x1", False), op.b("adj_x2", False), op)


@kernel("BatchMatMulV2", dtypes=_MM, source=f"{RAW_OPS}:38485 REG_OP(BatchMatMulV2)")
def batch_mat_mul_v2(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """As BatchMatMul, with an optional bias and an offset_w that must be absent here."""
    _no_offset(op, inputs)
    bias = inputs[2] if len(inputs) > 2 else None
    x1, x2 = required(op, inputs, 0), required(op, inputs, 1)
    return _matmul(x1, x2, bias, op.b("adj_x1", False), op.b("adj_x2", False), op)


_GMM_LISTS = ("x", "weight", "bias", "scale", "offset", "antiquant_scale", "antiquant_offset")


def _gmm_inputs(op: OpView, inputs: list[torch.Tensor | None]) -> dict[str, list[torch.Tensor]]:
    """GroupedMatmul's inputs by list (``x0``, ``weight0``, ... by their desc names), empty tensors left out, and
    ``group_list``/``per_token_scale``; a name outside the registration is refused."""
    lists: dict[str, list[torch.Tensor]] = {name: [] for name in (*_GMM_LISTS, "group_list", "per_token_scale")}
    for k, tensor in enumerate(inputs):
        name = op.input_name(k)
        base = name if name in ("group_list", "per_token_scale") else name.rstrip("0123456789")
        if base not in lists:
            raise op.fail(f"input {k} is named {name!r}, which GroupedMatmul's registration does not have")
        if tensor is not None and tensor.numel():
            lists[base].append(tensor)
    return lists


@kernel("GroupedMatmul", dtypes={"DT_FLOAT16", "DT_BF16", "DT_INT8", "DT_FLOAT"},
        source=f"{_DYNAMIC}:29 REG_OP(GroupedMatmul); {_GMM_DOC}")
def grouped_matmul(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """The case of one tensor each in x (M, K), weight (g, K, N) ((g, N, K) with ``transpose_weight``) and y (M, N),
    groups along M (``group_type`` 0, ``split_item`` 2 or 3): rows ``group_list[i-1]:group_list[i]`` of x times
    ``weight[i]``, plus ``bias[i]`` (g, N) when given. ``group_list`` is int64, cumulative (``group_list_type`` 0,
    non-decreasing) or per-group counts (1), and must account for every row of x (CANN's Atlas A2/A3 rule; other
    chips leave the rows past it undefined). x and weight share one float type, y has it (``dtype`` -1 or 0).
    Quantised and antiquantised forms, activations, a transposed x and the other splits are not run here."""
    lists = _gmm_inputs(op, inputs)
    quantised = [name for name in ("scale", "offset", "antiquant_scale", "antiquant_offset", "per_token_scale")
                 if lists[name]]
    if quantised or op.i("act_type", 0) or op.b("transpose_x", False) or op.i("dtype", 0) not in (-1, 0):
        raise op.fail(f"quantised inputs {quantised}, act_type={op.i('act_type', 0)}, transpose_x, or dtype="
                      f"{op.i('dtype', 0)}: only the plain float product (dtype -1/0) is run here")
    if op.i("group_type", -1) != 0 or op.i("split_item", 0) not in (2, 3):
        raise op.fail(f"group_type={op.i('group_type', -1)}, split_item={op.i('split_item', 0)}: only groups along "
                      "M with one output tensor (0; 2 or 3) are run here")
    if len(lists["x"]) != 1 or len(lists["weight"]) != 1 or len(lists["group_list"]) != 1 or len(lists["bias"]) > 1:
        raise op.fail("only one tensor each in x, weight and group_list (and at most one bias) is run here")
    x, weight, group_list = lists["x"][0], lists["weight"][0], lists["group_list"][0]
    if op.b("transpose_weight", False):
        weight = weight.transpose(-1, -2)
    if x.dtype != weight.dtype or x.dtype == torch.int8 or x.dim() != 2 or weight.dim() != 3 \
            or x.shape[1] != weight.shape[1]:
        raise op.fail(f"x {list(x.shape)} {x.dtype}, weight {list(weight.shape)} {weight.dtype}: one float dtype, "
                      "x (M, K) and weight (g, K, N)")
    if group_list.dtype != torch.int64 or group_list.dim() != 1 or group_list.numel() != weight.shape[0] \
            or not group_list.numel():
        raise op.fail(f"group_list must be 1-d int64 with one entry per group ({weight.shape[0]}), got "
                      f"{group_list.dtype} {list(group_list.shape)}")
    kind = op.i("group_list_type", 0)
    if kind not in (0, 1) or bool((group_list < 0).any()) or (kind == 0 and bool((group_list.diff() < 0).any())):
        raise op.fail(f"group_list {group_list.tolist()} with group_list_type {kind}: 0 takes a non-negative "
                      "non-decreasing list, 1 non-negative counts")
    ends = group_list if kind == 0 else group_list.cumsum(0)
    if int(ends[-1]) != x.shape[0]:
        raise op.fail(f"group_list {group_list.tolist()} accounts for {int(ends[-1])} rows of x's {x.shape[0]}")
    bias = lists["bias"][0] if lists["bias"] else None
    if bias is not None and tuple(bias.shape) != (weight.shape[0], weight.shape[2]):
        raise op.fail(f"bias {list(bias.shape)} must be (g, N) = {[weight.shape[0], weight.shape[2]]}")
    y = torch.zeros(x.shape[0], weight.shape[2], dtype=x.dtype)
    start = 0
    for group, end in enumerate(ends.tolist()):
        rows = x[start:end] @ weight[group]
        y[start:end] = rows if bias is None else rows + bias[group].to(rows.dtype)
        start = end
    return y
