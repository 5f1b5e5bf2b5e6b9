"""The reference's export of a collective (EX-4): the all_reduce op with its attrs and the wait that follows it, in a
gloo world of one in this process. The per-rank layout, weight files and ATC configs of a real 2-rank world are
checked by torchair_conformance/test_export_multi_rank.py."""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist

from tests.reference.export import checks, ranks
from torchair_ref.export import dynamo_export


@pytest.fixture
def world_of_one(tmp_path):
    dist.init_process_group("gloo", store=dist.FileStore(str(tmp_path / "store"), 1), rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()


def test_collective_is_an_op_with_its_group_and_reduction(tmp_path, world_of_one):
    """EX-4 in the reference: all_reduce is an op of the graph, its process group and reduction as attrs, followed
    by its wait_tensor; the rank's dynamo.pbtxt shows it once."""
    out = tmp_path / "out"
    dynamo_export(torch.randn(2, 4), model=ranks.AllReduceModel(0), export_path=str(out), export_name="net",
                  config=checks.config())
    graph = checks.load_air(out / "net0.air").graph[0]
    reduce_ops = checks.ops_of(graph, "HcomAllReduce")
    assert len(reduce_ops) == 1, dict(checks.op_counts(graph))
    op = reduce_ops[0]
    found = (op.attr["group"].s, op.attr["reduction"].s, op.attr["fusion"].i, op.attr["fusion_id"].i)
    assert found == (b"0", b"sum", 0, -1), op
    waits = [w for w in checks.ops_of(graph, "Identity") if list(w.input) == [f"{op.name}:0"]]
    assert waits, dict(checks.op_counts(graph))
    pbtxt = (out / "rank_0" / "dynamo.pbtxt").read_text()
    assert pbtxt.count('op: "HcomAllReduce"') == 1
