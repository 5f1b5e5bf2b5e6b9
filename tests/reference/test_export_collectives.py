"""EX-4/EX-7/EX-11: multi-rank exports of models with ``reduce_scatter_tensor``, ``all_gather_into_tensor`` and
``all_to_all_single`` (and the ports of upstream's ``test_export_with_allreduce`` reduce-scatter models), in a real
2-rank gloo world on 127.0.0.1 (``tests/programs/collective_run.py``, one fresh process per rank): each rank's graph
holds the Hcom ops upstream's converters write, with their attrs, and runs on the GE executor, its collectives
through gloo paired with the other rank's graph, to the model's eager outputs (whose collectives run through gloo
too), at the export's sizes and, for ``dynamic=True``, at others."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchair_conformance import harness, process

TIMEOUT_S = 300
HCOM = {
    "scatter_gather": {"HcomReduceScatter": {"reduction": "sum", "rank_size": 2, "fusion": 0, "fusion_id": -1},
                       "HcomAllGather": {"rank_size": 2, "fusion": 0, "fusion_id": -1}},
    "all_to_all": {"HcomAllToAllV": {}},
    "dist_reduce_scatter": {"HcomReduceScatter": {"reduction": "sum", "rank_size": 2, "fusion": 0, "fusion_id": -1}},
    "funcol_reduce_scatter": {"HcomReduceScatter": {"reduction": "sum", "rank_size": 2}},
}
CASES = [("scatter_gather", False), ("scatter_gather", True), ("all_to_all", False), ("all_to_all", True),
         ("dist_reduce_scatter", False), ("dist_reduce_scatter", True), ("funcol_reduce_scatter", True)]


def _run_world(tmp_path: Path, model: str, dynamic: bool, sizes: list[int]) -> list[dict]:
    port = harness.free_port()
    started = []
    try:
        for rank in range(2):
            env = process.child_env([], {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": str(rank),
                                         "WORLD_SIZE": "2"})
            job = {"model": model, "dynamic": dynamic, "export_path": str(tmp_path / "out"), "sizes": sizes}
            started.append(process.start("tests.programs.collective_run", job, tmp_path / f"rank{rank}",
                                         cwd=tmp_path, env=env))
        return [s.reply(TIMEOUT_S).result for s in started]
    finally:
        for s in started:
            s.kill()


@pytest.mark.parametrize("model,dynamic", CASES, ids=[f"{m}-{'dynamic' if d else 'static'}" for m, d in CASES])
def test_each_ranks_graph_runs_its_collectives_through_gloo(tmp_path, model, dynamic):
    sizes = [4, 6] if dynamic else [4]
    for reply in _run_world(tmp_path, model, dynamic, sizes):
        rank = reply["rank"]
        assert reply["error"] is None, f"rank {rank}: {reply['error']}"
        assert (tmp_path / "out" / f"export{rank}.air").is_file() and (tmp_path / "out" / f"rank_{rank}").is_dir()
        named = sorted(t for t in reply["ops"] if "." in t)
        assert not named, f"EX-7: rank {rank}: op types that are operator names: {named}"
        for op_type, attrs in HCOM[model].items():
            assert reply["ops"].get(op_type) == 1, f"EX-4: rank {rank}: {op_type} not once in {reply['ops']}"
            found = reply["attrs"][op_type]
            assert found["group"] and all(found[k] == v for k, v in attrs.items()), f"rank {rank}: {op_type} {found}"
        assert [run["size"] for run in reply["runs"]] == sizes, reply["runs"]
        for run in reply["runs"]:
            assert run["outputs"] == run["want"], f"EX-11: rank {rank}, size {run['size']}: {run}"
            for got_dtype, got_shape, want_dtype, want_shape in run["match"]:
                assert (got_dtype, got_shape) == (want_dtype, want_shape), f"EX-11: rank {rank}: {run}"
            assert run["max_err"] <= 1e-4, f"EX-11: rank {rank}, size {run['size']}: max |graph - eager| {run}"
