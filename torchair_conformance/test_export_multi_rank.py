"""SPEC EX-4 (per-rank layout, collectives kept) and EX-5 (ATC configs) in real ``torch.distributed`` gloo worlds on
127.0.0.1, one process per rank (``torchair_conformance.workers.export``), with EX-6/EX-7's checks per rank."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torchair_conformance import export_zoo, exports, harness, profiles
from torchair_conformance import strategies as cst
from torchair_conformance.assertions import (
    assert_data_ops,
    assert_edges_resolve,
    assert_files,
    assert_net_output,
    assert_options_json,
    assert_pbtxt_matches,
    assert_weights_in_files,
    assert_weights_inline,
    assert_worker_ok,
)

pytestmark = pytest.mark.requires("multi_rank_export")

ATC_FLAG = "export.experimental.auto_atc_config_generated"
ATC_FILES = ("model_relation_config.json", "numa_config.json")
# Each rank imports torch and traces once; on a loaded 2-core machine that can take a while, but not forever.
TIMEOUT_S = 300


def _export_world(impl, base, world: int, spec, batch, *, name: str, dynamic: bool, atc: bool, threshold):
    """Every rank exports ``spec`` (seeded with seed + rank) into ``base``/out; returns the export directory."""
    out = base / "out"
    jobs = [{"model": spec, "batch": batch, "input_seed": 0, "export_path": str(out), "export_name": name,
             "dynamic": dynamic, "config": [[ATC_FLAG, atc]], "threshold": threshold}] * world
    results = harness.run_ranks(jobs, impl=impl.name, cwd=base, worker="export", timeout=TIMEOUT_S)
    for rank, result in enumerate(results):
        assert_worker_ok(result, what=f"rank {rank} of {world}")
        assert (result["rank"], result["world_size"]) == (rank, world), f"rank {rank} saw {result}"
        assert result["returned"] == "None", f"EX-1: rank {rank}: dynamo_export returned {result['returned']}"
    return out


def _check_rank(out, base, spec, batch, rank: int, *, name: str, dynamic: bool, external: bool) -> set:
    """EX-4/EX-6/EX-7/EX-8 for one rank's files; returns the paths they take, relative to ``out``."""
    what = f"rank {rank}"
    rank_dir = out / f"rank_{rank}"
    air = out / exports.air_name(name, rank)
    assert air.is_file(), f"EX-4: {what}: no {air.name} in {sorted(exports.files_under(out))!r}"
    graph = exports.load_air(air).graph[0]
    assert_data_ops(graph, exports.expected_data(spec, batch, dynamic), what=f"EX-7: {what}")
    assert_net_output(graph, spec["outputs"], what=f"EX-7: {what}")
    assert_edges_resolve(graph, what=f"EX-7: {what}")
    reduces = [op.name for op in graph.op if exports.is_all_reduce(op.type)]
    assert reduces, f"EX-4: {what}: the all_reduce is not in the graph; op types {dict(exports.op_counts(graph))!r}"
    assert_pbtxt_matches((rank_dir / exports.PBTXT).read_text(encoding="utf-8"), graph, what=f"EX-8: {what}")
    assert_options_json(rank_dir / exports.OPTIONS_JSON, what=f"EX-4: {what}")
    own = {air.name, f"rank_{rank}/{exports.PBTXT}", f"rank_{rank}/{exports.OPTIONS_JSON}"}
    module = export_zoo.build_export_model({**spec, "seed": spec["seed"] + rank})
    weights = export_zoo.model_weights(module)
    if not external:
        assert_weights_inline(graph, weights, what=f"EX-6: {what}")
        return own
    files = assert_weights_in_files(graph, weights, rank_dir, cwd=base, what=f"EX-4/EX-6: {what}, threshold 0")
    return own | {f"rank_{rank}/{f}" for f in files}


@pytest.mark.clause("EX-4", "EX-6", "EX-7", "EX-8")
@pytest.mark.parametrize("threshold", [None, pytest.param(0, marks=pytest.mark.requires("threshold_override"))],
                         ids=["real-threshold", "threshold-0"])
@pytest.mark.parametrize("dynamic", [False, True])
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("process", 2))
def test_each_rank_writes_its_own_air_and_rank_directory(impl, dynamic, threshold, data):
    """EX-4: in a 2-rank world each rank writes <name><rank>.air and rank_<rank>/{dynamo.pbtxt,options.json} (+ its
    weight files), with the all_reduce kept in its graph."""
    spec = data.draw(cst.export_models(max_depth=2, all_reduce=True), label="model")
    batch = data.draw(cst.export_batches(cst.export_batch_dims(dynamic)), label="batch")
    name = data.draw(cst.export_names(), label="export_name")
    with harness.scratch() as base:
        out = _export_world(impl, base, 2, spec, batch, name=name, dynamic=dynamic, atc=False, threshold=threshold)
        expected = set()
        for rank in range(2):
            expected |= _check_rank(out, base, spec, batch, rank, name=name, dynamic=dynamic,
                                    external=threshold is not None)
        assert_files(out, expected, what="EX-4/EX-5: two ranks, no ATC flag: per-rank files and nothing else")


@pytest.mark.clause("EX-4")
@given(data=st.data())
@settings(max_examples=profiles.examples("process"))
def test_a_world_of_one_uses_the_rank_layout(impl, data):
    """EX-4: an initialised process group of world size 1 still writes <name>0.air and rank_0/."""
    spec = data.draw(cst.export_models(max_depth=2, all_reduce=True), label="model")
    batch = data.draw(cst.export_batches(), label="batch")
    name = data.draw(cst.export_names(), label="export_name")
    with harness.scratch() as base:
        out = _export_world(impl, base, 1, spec, batch, name=name, dynamic=False, atc=False, threshold=None)
        expected = _check_rank(out, base, spec, batch, 0, name=name, dynamic=False, external=False)
        assert_files(out, expected, what="EX-4: a world of one")


def _assert_json_file(path, expected) -> None:
    """EX-5: the file is ``json.dump(expected, indent=4)``: same text, so the same keys in the same order."""
    text = path.read_text(encoding="utf-8")
    want = json.dumps(expected, indent=4)
    assert text == want, f"EX-5: {path.name} should read exactly (json.dump, indent=4):\n{want}\nfound:\n{text}"


@pytest.mark.clause("EX-5", "EX-4")
@given(data=st.data())
@settings(max_examples=profiles.examples("process"))
def test_rank_0_writes_the_atc_configs(impl, data):
    """EX-5: with auto_atc_config_generated, rank 0 writes model_relation_config.json and numa_config.json as
    upstream lays them out (key order, the group rank list as text, nodes_toplogy)."""
    spec = data.draw(cst.export_models(max_depth=1, all_reduce=True), label="model")
    batch = data.draw(cst.export_batches(), label="batch")
    name = data.draw(cst.export_names(), label="export_name")
    with harness.scratch() as base:
        out = _export_world(impl, base, 2, spec, batch, name=name, dynamic=False, atc=True, threshold=None)
        top = {p for p in exports.files_under(out) if "/" not in p}
        expected_top = {exports.air_name(name, 0), exports.air_name(name, 1), *ATC_FILES}
        assert top == expected_top, f"EX-5: expected {sorted(expected_top)!r} in {out}, found {sorted(top)!r}"
        relation = json.loads((out / ATC_FILES[0]).read_text(encoding="utf-8"))
        groups = relation.get("comm_group")
        assert isinstance(groups, list) and len(groups) == 1 and isinstance(groups[0].get("group_name"), str), (
            f"EX-5: one comm_group entry (the default group the all_reduce uses) with a group_name, found {groups!r}")
        group = groups[0]["group_name"]
        _assert_json_file(out / ATC_FILES[0], exports.model_relation_config(name, 2, {group: [0, 1]}))
        _assert_json_file(out / ATC_FILES[1], exports.numa_config(2))
