"""IMPL-4/EX-11: kernels for the GE op types the reference's exports (and upstream's converters) emit beyond the
executor's first set: the benchmark presets' shape and reduction ops, ``GeluV2``, ``Muls`` and ``HcomAllReduce``.

Dtype sets come from each op's ``REG_OP`` in the wheel's generated raw ops (``RAW_OPS:<line>``; ``TensorType::X()``
sets as ``METADEF`` spells them out). ``GeluV2``'s registration names its type ``"T"``; its semantics and types are
CANN's (aclnnGeluQuant: "GeluV2 ... approximate = tanh | none", bfloat16/float16/float32).

``HcomAllReduce`` runs through ``torch.distributed`` (gloo on CPU) in the process group its ``group`` attr names: an
exported rank graph executes its collective for real in the rank's process, so the graph is checked across the
subgraph boundary, not around it. Without an initialised process group it is an error saying so.
"""

from __future__ import annotations

import torch

from torchair_cpu.ge.registry import ALL, BASIC, FLOATS, METADEF, RAW_OPS, REAL, UNARY, OpView, kernel

_GELU_V2_DOC = "hiascend.com CANN aclnnGeluQuant (GeluV2: approximate none = erf, tanh = tanh form)"


@kernel("GeluV2", dtypes=FLOATS, source=f"{RAW_OPS}:81 REG_OP(GeluV2); {_GELU_V2_DOC}")
def gelu_v2(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """GELU with attr ``approximate``: ``"none"`` (default) is 0.5x(1 + erf(x/sqrt 2)), ``"tanh"`` the tanh form."""
    approximate = op.s("approximate", b"none").decode()
    if approximate not in ("none", "tanh"):
        raise op.fail(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    return torch.nn.functional.gelu(inputs[0], approximate=approximate)


@kernel("Muls", dtypes={"DT_FLOAT", "DT_INT16", "DT_INT32", "DT_FLOAT16"}, source=f"{RAW_OPS}:15375 REG_OP(Muls)")
def muls(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x times the float attr ``value``, in x's dtype."""
    return (inputs[0] * op.f("value")).to(inputs[0].dtype)


@kernel("Neg", dtypes={"DT_BF16", "DT_FLOAT16", "DT_FLOAT", "DT_DOUBLE", "DT_INT32", "DT_INT64", "DT_COMPLEX64",
                       "DT_COMPLEX128"}, source=f"{RAW_OPS}:10952 REG_OP(Neg)")
def neg(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    return -inputs[0]


@kernel("Rsqrt", dtypes=UNARY, source=f"{RAW_OPS}:11166 REG_OP(Rsqrt), UnaryDataType() ({METADEF})")
def rsqrt(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    return torch.rsqrt(inputs[0])


@kernel("Pow", dtypes=REAL, source=f"{RAW_OPS}:13342 REG_OP(Pow) (T1: real numbers)")
def pow_(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x1 ** x2, broadcast, in x1's dtype."""
    return torch.pow(inputs[0], inputs[1]).to(inputs[0].dtype)


@kernel("ReduceMean", dtypes=BASIC, source=f"{RAW_OPS}:70332 REG_OP(ReduceMean), NumberType() ({METADEF})")
def reduce_mean(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """Mean over ``axes`` (attr ``keep_dims``); empty axes: x itself when ``noop_with_empty_axes``, else all."""
    x, axes = inputs[0], [int(a) for a in inputs[1].reshape(-1).tolist()]
    if not axes:
        return x.clone() if op.b("noop_with_empty_axes", True) else x.mean().to(x.dtype)
    return x.mean(dim=axes, keepdim=op.b("keep_dims", False))


@kernel("Greater", dtypes=REAL, source=f"{RAW_OPS}:12280 REG_OP(Greater), RealNumberType() ({METADEF})")
def greater(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x1 > x2, broadcast: a bool tensor."""
    return torch.gt(inputs[0], inputs[1])


@kernel("BroadcastTo", dtypes=ALL, source=f"{RAW_OPS}:64912 REG_OP(BroadcastTo)")
def broadcast_to(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    shape = [int(d) for d in inputs[1].reshape(-1).tolist()]
    try:
        return torch.broadcast_to(inputs[0], shape).contiguous()
    except RuntimeError as exc:
        raise op.fail(f"cannot broadcast {list(inputs[0].shape)} to {shape}: {exc}") from exc


@kernel("ConcatV2", dtypes=ALL, source=f"{RAW_OPS}:82697 REG_OP(ConcatV2)")
def concat_v2(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """The dynamic inputs x0..x(N-1) joined along the last input, ``concat_dim``."""
    tensors, dim = inputs[:-1], int(inputs[-1].reshape(-1)[0])
    if len(tensors) != op.i("N", 1):
        raise op.fail(f"attr N is {op.i('N', 1)} but {len(tensors)} tensors are given")
    return torch.cat(tensors, dim=dim)


@kernel("StridedSliceV2", dtypes=BASIC, source=f"{RAW_OPS}:79460 REG_OP(StridedSliceV2)")
def strided_slice_v2(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x[begin:end:strides] along ``axes`` (0-d or 1-d operands; ends past the dim are clamped, as GE does)."""
    x = inputs[0]
    begin, end = (inputs[k].reshape(-1).tolist() for k in (1, 2))
    axes = inputs[3].reshape(-1).tolist() if inputs[3] is not None else list(range(len(begin)))
    strides = inputs[4].reshape(-1).tolist() if inputs[4] is not None else [1] * len(begin)
    if any(op.i(mask, 0) for mask in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")):
        raise op.fail("masks are not supported here")
    index = [slice(None)] * x.dim()
    for b, e, axis, step in zip(begin, end, axes, strides):
        if step <= 0:
            raise op.fail(f"stride {step} along axis {axis}: only positive strides are supported here")
        index[int(axis)] = slice(int(b), int(e), int(step))
    return x[tuple(index)].contiguous()


@kernel("Unsqueeze", dtypes=ALL, source=f"{RAW_OPS}:1459 REG_OP(Unsqueeze)")
def unsqueeze(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x with a size-1 dim inserted at each of attr ``axes`` (negative ones counted from the result's rank)."""
    x = inputs[0]
    axes = op.ints("axes", [])
    rank = x.dim() + len(axes)
    for axis in sorted(a % rank for a in axes):
        x = x.unsqueeze(axis)
    return x.clone()


@kernel("TensorMove", dtypes={"DT_FLOAT16", "DT_FLOAT", "DT_INT32", "DT_UINT32", "DT_INT8", "DT_UINT8", "DT_UINT64",
                              "DT_INT64", "DT_BOOL"}, source=f"{RAW_OPS}:15649 REG_OP(TensorMove)")
def tensor_move(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    return inputs[0].clone()


_REDUCE_OPS = {"sum": "SUM", "min": "MIN", "max": "MAX", "prod": "PRODUCT"}


@kernel("HcomAllReduce", dtypes={"DT_FLOAT", "DT_INT32", "DT_INT8", "DT_INT16", "DT_FLOAT16"},
        source=f"{RAW_OPS}:26588 REG_OP(HcomAllReduce)")
def hcom_all_reduce(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x reduced (attr ``reduction``) over the ranks of the process group named by attr ``group``, via
    ``torch.distributed`` (gloo on CPU) in the calling rank's process."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        raise op.fail("HcomAllReduce runs through torch.distributed here: initialise the rank's process group "
                      "(e.g. gloo) before running a graph with a collective")
    reduction = op.s("reduction").decode()
    if reduction not in _REDUCE_OPS:
        raise op.fail(f"reduction must be one of {sorted(_REDUCE_OPS)}, got {reduction!r}")
    y = inputs[0].clone()
    dist.all_reduce(y, op=getattr(dist.ReduceOp, _REDUCE_OPS[reduction]), group=_process_group(op))
    return y


def _process_group(op: OpView) -> object:
    """The process group attr ``group`` names: a c10d group name (the reference writes those), or upstream's CPU
    form ``tag=<tag>;rank_list=<r>,<r>...`` (hcom_utils.py:7-20 and 46-47 in the wheel; on an NPU it would be an
    HCCL communicator name, which no CPU world has)."""
    import torch.distributed as dist

    name = op.s("group").decode()
    fields = dict(part.split("=", 1) for part in name.split(";") if "=" in part)
    c10d = dist.distributed_c10d
    if "rank_list" in fields:
        ranks = [int(r) for r in fields["rank_list"].split(",")]
        return c10d._find_or_create_pg_by_ranks_and_tag(fields.get("tag", ""), ranks, len(ranks))
    try:
        return c10d._resolve_process_group(name)
    except (RuntimeError, ValueError) as exc:
        raise op.fail(f"no process group of this world is named {name!r}: {exc}") from exc



_COMPLEX = frozenset({"DT_COMPLEX64", "DT_COMPLEX128"})


@kernel("Real", dtypes=_COMPLEX, source=f"{RAW_OPS}:35934 REG_OP(Real)")
def real(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """The real part of a complex tensor, as ``Tout`` (float for complex64, double for complex128; default float)."""
    return _part(op, inputs[0].real)


@kernel("Imag", dtypes=_COMPLEX, source=f"{RAW_OPS}:36853 REG_OP(Imag)")
def imag(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """The imaginary part of a complex tensor, as ``Tout`` (float for complex64, double for complex128)."""
    return _part(op, inputs[0].imag)


def _part(op: OpView, part: torch.Tensor) -> torch.Tensor:
    out = op.dt("Tout") if op.has("Tout") else torch.float32
    if out not in (torch.float32, torch.float64):
        raise op.fail(f"Tout must be DT_FLOAT or DT_DOUBLE (REG_OP's output types), got {out}")
    return part.to(out).contiguous()


@kernel("ReduceSum", dtypes=BASIC, source=f"{RAW_OPS}:70031 REG_OP(ReduceSum), NumberType() ({METADEF})")
def reduce_sum(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """Sum over ``axes`` (attr ``keep_dims``), in the input's dtype; empty axes: the input itself (ONNX-style
    ``noop_with_empty_axes``, which ReduceSum's registration does not have: GE reduces nothing then)."""
    x, axes = inputs[0], [int(a) for a in inputs[1].reshape(-1).tolist()]
    if not axes:
        return x.clone()
    return x.sum(dim=axes, keepdim=op.b("keep_dims", False)).to(x.dtype)
