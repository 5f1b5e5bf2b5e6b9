"""EX-4, EX-11: GE collective kernels. ``HcomAllReduce``, ``HcomAllGather``, ``HcomReduceScatter`` and
``HcomAllToAllV`` run through ``torch.distributed`` (gloo on CPU) in the process group their ``group`` attr names: an
exported rank graph executes its collective for real in the rank's process, so the graph is checked across the
subgraph boundary, not around it. Without an initialised process group it is an error saying so."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from ge_executor.registry import RAW_OPS, OpView, input_ints, kernel, required

if TYPE_CHECKING:  # torch.distributed is imported where a collective runs (it may be unavailable in a build)
    from torch.distributed import ProcessGroup

_REDUCE_OPS = {"sum": "SUM", "min": "MIN", "max": "MAX", "prod": "PRODUCT"}


@kernel("HcomAllReduce", dtypes={"DT_FLOAT", "DT_INT32", "DT_INT8", "DT_INT16", "DT_FLOAT16"},
        source=f"{RAW_OPS}:26588 REG_OP(HcomAllReduce)")
def hcom_all_reduce(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x reduced (attr ``reduction``) over the ranks of the process group named by attr ``group``, via
    ``torch.distributed`` (gloo on CPU) in the calling rank's process."""
    import torch.distributed as dist

    y = required(op, inputs, 0).clone()
    dist.all_reduce(y, op=_reduce_op(op), group=_process_group(op))
    return y


@kernel("HcomAllGather", dtypes={"DT_FLOAT", "DT_INT32", "DT_INT8", "DT_INT16", "DT_FLOAT16", "DT_INT64", "DT_UINT64",
                                 "DT_UINT8", "DT_UINT16", "DT_UINT32", "DT_DOUBLE"},
        source=f"{RAW_OPS}:26484 REG_OP(HcomAllGather) (DT_FLOAT64 there: DT_DOUBLE)")
def hcom_all_gather(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """The x of every rank of the group (attr ``rank_size`` of them), concatenated along dim 0 in rank order."""
    import torch.distributed as dist

    x, group = required(op, inputs, 0).contiguous(), _process_group(op)
    _check_rank_size(op, group)
    pieces = [torch.empty_like(x) for _ in range(dist.get_world_size(group))]
    dist.all_gather(pieces, x, group=group)
    return torch.cat(pieces, dim=0)


@kernel("HcomReduceScatter", dtypes={"DT_FLOAT", "DT_INT32", "DT_INT8", "DT_INT16", "DT_FLOAT16"},
        source=f"{RAW_OPS}:26847 REG_OP(HcomReduceScatter)")
def hcom_reduce_scatter(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x reduced (attr ``reduction``) over the group's ranks, then split along dim 0 into ``rank_size`` equal
    parts: rank r gets part r. Dim 0 must divide evenly."""
    import torch.distributed as dist

    x, group = required(op, inputs, 0).contiguous(), _process_group(op)
    ranks = _check_rank_size(op, group)
    if x.dim() == 0 or x.shape[0] % ranks:
        raise op.fail(f"dim 0 of x {list(x.shape)} does not split into {ranks} equal parts")
    y = torch.empty((x.shape[0] // ranks, *x.shape[1:]), dtype=x.dtype)
    dist.reduce_scatter_tensor(y, x, op=_reduce_op(op), group=group)
    return y


@kernel("HcomAllToAllV", dtypes={"DT_FLOAT", "DT_INT32", "DT_INT8", "DT_INT16", "DT_FLOAT16", "DT_INT64", "DT_UINT64",
                                 "DT_UINT8", "DT_UINT16", "DT_UINT32", "DT_DOUBLE"},
        source=f"{RAW_OPS}:27192 REG_OP(HcomAllToAllV) (counts, displacements: DT_INT64; DT_FLOAT64: DT_DOUBLE)")
def hcom_all_to_all_v(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """Rank r sends send_data's elements [send_displacements[k], + send_counts[k]) (flat, row-major) to rank k and
    puts what rank k sends it at recv_displacements[k]; the received elements, in send_data's row shape (its dims
    after the first), as torch's all_to_all_single returns them."""
    import torch.distributed as dist

    x, group = required(op, inputs, 0).contiguous(), _process_group(op)
    send, send_at, recv, recv_at = (input_ints(t, op, name) for t, name in zip(inputs[1:5], (
        "send_counts", "send_displacements", "recv_counts", "recv_displacements")))
    world = dist.get_world_size(group)
    if not len(send) == len(send_at) == len(recv) == len(recv_at) == world or min(send + recv + send_at + recv_at) < 0:
        raise op.fail(f"counts and displacements must be {world} non-negative ints each")
    flat = x.reshape(-1)
    if max(a + n for a, n in zip(send_at, send)) > flat.numel():
        raise op.fail(f"send counts {send} at {send_at} reach past the {flat.numel()} elements of send_data")
    outgoing = torch.cat([flat[a:a + n] for a, n in zip(send_at, send)])
    incoming = torch.empty(sum(recv), dtype=x.dtype)
    dist.all_to_all_single(incoming, outgoing, output_split_sizes=recv, input_split_sizes=send, group=group)
    received = torch.zeros(max(a + n for a, n in zip(recv_at, recv)), dtype=x.dtype)
    for (a, n), piece in zip(zip(recv_at, recv), torch.split(incoming, recv)):
        received[a:a + n] = piece
    row = x[0].numel() if x.dim() and x.shape[0] else 1
    if received.numel() % max(row, 1):
        raise op.fail(f"{received.numel()} received elements are not whole rows of {list(x.shape[1:])}")
    return received.reshape(-1, *x.shape[1:]) if x.dim() else received


def _reduce_op(op: OpView) -> object:
    import torch.distributed as dist

    reduction = op.s("reduction").decode()
    if reduction not in _REDUCE_OPS:
        raise op.fail(f"reduction must be one of {sorted(_REDUCE_OPS)}, got {reduction!r}")
    return getattr(dist.ReduceOp, _REDUCE_OPS[reduction])


def _check_rank_size(op: OpView, group: ProcessGroup) -> int:
    import torch.distributed as dist

    ranks = dist.get_world_size(group)
    if op.i("rank_size") != ranks:
        raise op.fail(f"rank_size {op.i('rank_size')} but the process group has {ranks} ranks")
    return ranks


def _process_group(op: OpView) -> ProcessGroup:
    """The process group attr ``group`` names: a c10d group name (the reference writes those), or upstream's CPU
    form ``tag=<tag>;rank_list=<r>,<r>...`` (hcom_utils.py:7-20 and 46-47 in the wheel; on an NPU it would be an
    HCCL communicator name, which no CPU world has)."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        raise op.fail(f"{op.type} runs through torch.distributed here: initialise the rank's process group (e.g. "
                      "gloo) before running a graph with a collective")
    name = op.s("group").decode()
    fields = dict(part.split("=", 1) for part in name.split(";") if "=" in part)
    # c10d's group-name lookup (the one its functional collectives use), imported there but not re-exported
    from torch.distributed.distributed_c10d import _resolve_process_group  # type: ignore[attr-defined]

    c10d = dist.distributed_c10d
    if "rank_list" in fields:
        ranks = [int(r) for r in fields["rank_list"].split(",")]
        return c10d._find_or_create_pg_by_ranks_and_tag(fields.get("tag", ""), ranks, len(ranks))
    try:
        return _resolve_process_group(c10d.GroupName(name))
    except (RuntimeError, ValueError) as exc:
        raise op.fail(f"no process group of this world is named {name!r}: {exc}") from exc
