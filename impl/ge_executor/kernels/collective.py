"""EX-4, EX-11: GE collective kernels. ``HcomAllReduce`` runs through ``torch.distributed`` (gloo on CPU) in the
process group its ``group`` attr names: an exported rank graph executes its collective for real in the rank's process,
so the graph is checked across the subgraph boundary, not around it. Without an initialised process group it is an
error saying so."""

from __future__ import annotations

import torch

from ge_executor.registry import RAW_OPS, OpView, kernel

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
