"""EX-7/EX-11 on ports of upstream TorchAir's own export system tests (``tests/reference/export/upstream_ports.py``;
the reduce_scatter_tensor one needs two ranks: ``test_export_collectives.py``). Each exported before this change
was refused (``aten.ones``, ``aten.sum``, ``aten._softmax``); now each exports with GE op types only and its graph
runs on the GE executor to the model's eager outputs, the dynamic ones at other sizes too."""

from __future__ import annotations

import pytest
import torch

import ge_executor
from tests.reference.export import checks
from tests.reference.export import upstream_ports as ports
from torchair_ref.export import dynamo_export


def _export(tmp_path, model, args, dynamic):
    torch._dynamo.reset()
    dynamo_export(*args, model=model, export_path=str(tmp_path), dynamic=dynamic)
    return checks.load_air(tmp_path / "export.air").graph[0]


def _feeds(graph, args) -> list[torch.Tensor]:
    """The graph's Data feeds: the tensor arguments, then each Python int that is a Data of its own (a symbolic
    size the graph reads from no tensor), in argument order."""
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    scalars = [torch.tensor(a) for a in args if isinstance(a, int)]
    data = len(checks.ops_of(graph, "Data"))
    return tensors + scalars[:data - len(tensors)]


def _assert_runs(graph, tmp_path, model, args, what):
    with torch.no_grad():
        want = model(*args)
    want = list(want) if isinstance(want, tuple) else [want]
    got = ge_executor.load(graph, weights_dir=tmp_path).run(_feeds(graph, args))
    assert len(got) == len(want), what
    for k, (g, w) in enumerate(zip(got, want)):
        assert (g.dtype, g.shape) == (w.dtype, w.shape), f"{what} output {k}: {g.dtype} {g.shape}, eager {w.dtype} " \
                                                         f"{w.shape}"
        torch.testing.assert_close(g, w, rtol=1e-3, atol=1e-4, msg=f"EX-11: {what} output {k}")


def _assert_ge_types(graph, what):
    named = sorted({op.type for op in graph.op if "." in op.type or not op.type.isidentifier()})
    assert not named, f"EX-7: {what}: op types that are operator names: {named}"


def test_export_bf16(tmp_path):
    """test_export_bf16: two Data ops, no Shape (static), the bfloat16 parameter a weight; torch.ones is a Fill;
    outputs exactly eager's (element-wise ops in the same dtypes)."""
    torch.manual_seed(0)
    model, args = ports.Bf16(), ports.example_bf16()
    graph = _export(tmp_path, model, args, dynamic=False)
    _assert_ge_types(graph, "bf16")
    counts = checks.op_counts(graph)
    assert (counts["Data"], counts["Shape"], counts["Fill"]) == (2, 0, 1), dict(counts)
    assert checks.weight_ops(graph, "Const") and checks.weight_ops(graph, "Const")[0].name == "p1", dict(counts)
    _assert_runs(graph, tmp_path, model, args, "bf16")


def test_export_with_sym_pack(tmp_path):
    """test_export_with_sym_pack: dynamic=True, the view sizes from the int arguments are Pack ops (upstream asserts
    two; the reference packs each view's size list, five views); x.sum() is a ReduceSum over every axis; the graph
    runs at upstream's sizes and at others (y = 4)."""
    torch.manual_seed(0)
    model, args = ports.SymPack(), ports.example_sym_pack(3)
    graph = _export(tmp_path, model, args, dynamic=True)
    _assert_ge_types(graph, "sym_pack")
    counts = checks.op_counts(graph)
    assert counts["Pack"] >= 2 and counts["ReduceSum"] == 2, dict(counts)
    for y in (3, 4):
        _assert_runs(graph, tmp_path, model, ports.example_sym_pack(y), f"sym_pack y={y}")


@pytest.mark.parametrize("dynamic", [False, True])
def test_a_transformer_block_with_softmax(tmp_path, dynamic):
    """A block written out by hand: att.softmax(-1) is SoftmaxV2 over the last axis, the tril mask a Tril (bool via
    uint8), masked_fill a MaskedFill, q @ k^T a BatchMatMul; dynamic=True runs at another batch and length."""
    torch.manual_seed(0)
    model = ports.Block().eval()
    graph = _export(tmp_path, model, ports.example_block(), dynamic=dynamic)
    _assert_ge_types(graph, "block")
    counts = checks.op_counts(graph)
    assert all(counts[t] for t in ("SoftmaxV2", "Tril", "MaskedFill", "BatchMatMul", "LayerNormV4")), dict(counts)
    softmax = checks.ops_of(graph, "SoftmaxV2")[0]
    assert list(softmax.attr["axes"].list.i) == [-1], softmax
    for shape in [(2, 8)] + ([(3, 5)] if dynamic else []):
        _assert_runs(graph, tmp_path, model, ports.example_block(*shape), f"block dynamic={dynamic} {shape}")
