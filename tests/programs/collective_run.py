"""One rank of a gloo world (tests/reference/test_export_collectives.py): export a model with collectives through
the reference's ``dynamo_export``, run this rank's graph on the GE executor (its Hcom ops through gloo, paired with
the other ranks' graphs) and the model eagerly (its collectives through gloo too), and reply how they compare.

Job keys: ``model`` (a name of ``MODELS``), ``dynamic``, ``export_path``, ``sizes`` (the leading sizes to run the
graph at; the first is the export's). Reply: ``rank``, ``world``, ``ops`` (op type counts of this rank's graph),
``attrs`` (each collective op's attrs), ``runs`` (per size: max |graph - eager| and whether shapes and dtypes
match), ``error``.
"""

from __future__ import annotations

import logging
import os
import sys
import traceback
from collections import Counter
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
from torch import nn

from torchair_conformance import process

HCOM = ("HcomAllReduce", "HcomAllGather", "HcomReduceScatter", "HcomAllToAllV")


class ScatterGather(nn.Module):
    """Tensor-parallel style: project, reduce-scatter the rows among the ranks, an activation on each rank's shard,
    all-gather the rows back, project again."""

    def __init__(self) -> None:
        super().__init__()
        self.proj, self.out = nn.Linear(8, 8), nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shard = funcol.reduce_scatter_tensor(self.proj(x), "sum", scatter_dim=0, group=dist.group.WORLD)
        full = funcol.all_gather_tensor(torch.relu(shard), gather_dim=0, group=dist.group.WORLD)
        return self.out(full)


class AllToAll(nn.Module):
    """Expert-parallel style: project, exchange equal row blocks with every rank, project again."""

    def __init__(self) -> None:
        super().__init__()
        self.proj, self.out = nn.Linear(8, 8), nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(funcol.all_to_all_single(self.proj(x), None, None, group=dist.group.WORLD))


def _models() -> dict[str, Any]:
    from tests.reference.export import upstream_ports as ports

    returned = lambda args, value: [value]  # noqa: E731 - the graph's outputs are the model's
    return {
        # name: (model factory, inputs for a leading size n, the graph's expected outputs after the eager call)
        "scatter_gather": (ScatterGather, lambda n, g: (torch.randn(n, 8, generator=g),), returned),
        "all_to_all": (AllToAll, lambda n, g: (torch.randn(n, 8, generator=g),), returned),
        # test_export_with_allreduce's inputs: x = [0, 1, 2, 3] int32 and an output of 2 (here n and n // 2); the
        # graph returns the new value of the mutated argument first (AOTAutograd's order), then the model's result
        "dist_reduce_scatter": (ports.DistReduceScatterTensor, lambda n, g: (
            torch.randint(0, 9, (n,), generator=g, dtype=torch.int32), torch.zeros(n // 2, dtype=torch.int32)),
            lambda args, value: [args[1], value]),
        "funcol_reduce_scatter": (ports.FuncolReduceScatterTensor, lambda n, g: (
            torch.randint(0, 9, (3, n), generator=g).to(torch.int32),), returned),
    }


def main() -> int:
    import ge_executor
    from ge_executor import ge_ir
    from torchair_ref.export import dynamo_export

    job = process.read_job()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    dist.init_process_group("gloo", init_method="env://", timeout=timedelta(seconds=120))
    rank, world = dist.get_rank(), dist.get_world_size()
    result: dict[str, Any] = {"rank": rank, "world": world, "error": None, "runs": []}
    try:
        factory, inputs, expect = _models()[job["model"]]
        torch.manual_seed(1000 + rank)  # each rank its own weights and inputs
        model = factory().eval()
        gen = torch.Generator().manual_seed(rank)
        sizes = job["sizes"]
        dynamo_export(*inputs(sizes[0], gen), model=model, export_path=job["export_path"], dynamic=job["dynamic"])
        with open(os.path.join(job["export_path"], f"export{rank}.air"), "rb") as handle:
            parsed = ge_ir.ModelDef.FromString(handle.read())
        graph = ge_executor.load(parsed)
        result["ops"] = dict(Counter(op.type for op in parsed.graph[0].op))
        result["attrs"] = {op.type: {k: _attr(v) for k, v in op.attr.items()} for op in parsed.graph[0].op
                           if op.type in HCOM}
        for n in sizes:
            args = inputs(n, torch.Generator().manual_seed(100 * rank + n))
            eager_args = [a.clone() for a in args]
            with torch.no_grad():
                value = model(*eager_args)  # every rank: eager first, then the graph (their collectives pair up)
            got = graph.run([a.clone() for a in args])
            want = expect(eager_args, value)
            runs = {"size": n, "outputs": len(got), "want": len(want), "match": [], "max_err": 0.0}
            for g, w in zip(got, want):
                w = w.wait() if hasattr(w, "wait") else w
                runs["match"].append([str(g.dtype), list(g.shape), str(w.dtype), list(w.shape)])
                runs["max_err"] = max(runs["max_err"], (g.double() - w.double()).abs().max().item())
            result["runs"].append(runs)
    except Exception as exc:  # noqa: BLE001 - the test reports it
        result["error"] = "".join(traceback.format_exception(exc))[-4000:]
    finally:
        try:
            dist.barrier()
        finally:
            dist.destroy_process_group()
    process.reply(result)
    return 0


def _attr(value: Any) -> Any:
    kind = value.WhichOneof("value")
    data = getattr(value, kind) if kind else None
    return data.decode() if isinstance(data, bytes) else data if kind != "list" else list(data.i)


if __name__ == "__main__":
    sys.exit(main())
