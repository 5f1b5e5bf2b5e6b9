"""dynamo_export on two real gloo ranks: per-rank layout, collectives kept, ATC configs (EX-4, EX-5, EX-6)."""

from __future__ import annotations

import json

import pytest

from tests.export import checks, ranks

WORLD = 2
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Both ranks export twice: plain (flags off, inline) and atc (auto_atc_config_generated, externalised)."""
    root = tmp_path_factory.mktemp("ranks")
    ranks.run_ranks(WORLD, str(root))
    return root


def test_per_rank_layout(exported):
    """EX-4: each rank writes <name><rank>.air and rank_<rank>/{dynamo.pbtxt,options.json}; no ATC files without the
    flag."""
    found = checks.files_under(exported / "plain")
    assert found == {"net0.air", "net1.air", "rank_0/dynamo.pbtxt", "rank_1/dynamo.pbtxt", "rank_0/options.json",
                     "rank_1/options.json"}, found


@pytest.mark.parametrize("rank", range(WORLD))
def test_collectives_stay_in_the_graph(exported, rank):
    """EX-4: all_reduce is an op of the graph, with its process group as an attr."""
    graph = checks.load_air(exported / "plain" / f"net{rank}.air").graph[0]
    reduce_ops = checks.ops_of(graph, "_c10d_functional.all_reduce.default")
    assert len(reduce_ops) == 1, dict(checks.op_counts(graph))
    op = reduce_ops[0]
    assert (op.attr["group_name"].s, op.attr["reduce_op"].s) == (b"0", b"sum"), op
    assert checks.ops_of(graph, "_c10d_functional.wait_tensor.default"), dict(checks.op_counts(graph))
    pbtxt = (exported / "plain" / f"rank_{rank}" / "dynamo.pbtxt").read_text()
    assert pbtxt.count('op: "_c10d_functional.all_reduce.default"') == 1


@pytest.mark.parametrize("rank", range(WORLD))
def test_weight_files_in_the_rank_directory(exported, rank):
    """EX-4/EX-6: an externalised rank's weight files are in rank_<rank>/ and hold that rank's weights."""
    model = ranks.AllReduceModel(rank)
    rank_dir = exported / "atc" / f"rank_{rank}"
    graph = checks.load_air(exported / "atc" / f"net{rank}.air").graph[0]
    ops = {op.name: op for op in graph.op}
    for fqn, t in model.named_parameters():
        checks.assert_file_constant_holds(ops[fqn], t, rank_dir, fqn)
    assert checks.files_under(rank_dir) == {"dynamo.pbtxt", "options.json", "proj_weight", "proj_bias"}, checks.files_under(rank_dir)


def test_atc_configs(exported):
    """EX-5: rank 0 writes model_relation_config.json and numa_config.json exactly as upstream lays them out."""
    root = exported / "atc"
    top = {p for p in checks.files_under(root) if "/" not in p}
    assert top == {"net0.air", "net1.air", "model_relation_config.json", "numa_config.json"}, top
    relation = {
        "deploy_config": [{"submodel_name": f"net{r}.air", "deploy_device_id_list": f"0:0:{r}"} for r in range(WORLD)],
        "model_name_to_instance_id": [{"submodel_name": f"net{r}.air", "model_instance_id": r} for r in range(WORLD)],
        "comm_group": [{"group_name": "0", "group_rank_list": "[0, 1]"}],
        "rank_table": [{"rank_id": r, "model_instance_id": r} for r in range(WORLD)],
    }
    numa = {
        "cluster": [{
            "cluster_nodes": [{"node_id": 0, "node_type": "ATLAS800", "ipaddr": "127.0.0.1", "port": 29500,
                               "item_list": [{"item_id": r} for r in range(WORLD)]}],
            "nodes_toplogy": {},
        }],
        "item_def": [{"item_type": "Ascend910"}],
        "node_def": [{"item": [{"item_type": "Ascend910"}]}],
    }  # fmt: skip
    for name, expected in (("model_relation_config.json", relation), ("numa_config.json", numa)):
        text = (root / name).read_text()
        assert text == json.dumps(expected, indent=4), f"{name}:\n{text}\nexpected:\n{json.dumps(expected, indent=4)}"
        assert list(json.loads(text)) == list(expected), f"{name}: key order {list(json.loads(text))}"
