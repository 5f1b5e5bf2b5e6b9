"""Properties of exports of generated MLPs: depth, widths, dtypes, tied weights, both sides of the threshold.

Clauses: EX-6, EX-7, EX-9.
"""

from __future__ import annotations

import tempfile

import torch
from hypothesis import given

from ge_executor import ge_ir
from tests.reference.export import checks
from tests.reference.export.strategies import EXPORT_PROPERTY, MLPCase, mlp_cases
from torchair_ref.export import DEFAULT_THRESHOLD, dynamo_export, externalize_threshold


def _used_weights(case: MLPCase, model) -> dict[str, torch.Tensor]:
    """The distinct tensors the forward uses, by the name the exporter gives them (first registered name)."""
    used = {}
    for fqn, t in model.named_parameters():
        last = f"layers.{len(case.widths) - 2}."
        if case.tie and fqn == f"{last}weight":
            continue  # replaced by the tied weight in the last layer
        used[fqn] = t
    return used


@EXPORT_PROPERTY
@given(case=mlp_cases())
def test_generated_mlp_export(case: MLPCase):
    """EX-6/EX-7/EX-9: one Data, one weight op per distinct used tensor, all inline or all files, exact bytes."""
    model, x = case.build()
    with tempfile.TemporaryDirectory() as out, externalize_threshold(0 if case.external else DEFAULT_THRESHOLD):
        dynamo_export(x, model=model, export_path=out, dynamic=case.dynamic)
        graph = checks.load_air(f"{out}/export.air").graph[0]
        counts = checks.op_counts(graph)
        weights = _used_weights(case, model)
        kind = "FileConstant" if case.external else "Const"
        found = {op.name for op in checks.weight_ops(graph, kind)}
        assert found == set(weights), f"{kind} ops {sorted(found)}, used weights {sorted(weights)}; {case}"
        assert not checks.weight_ops(graph, {"FileConstant": "Const", "Const": "FileConstant"}[kind]), dict(counts)
        depth = len(case.widths) - 1
        # addmm is MatMulV2, mm (the tied layer's x @ weight) MatMul
        assert (counts["MatMulV2"], counts["MatMul"]) == (depth - case.tie, int(case.tie)), counts

        data = checks.ops_of(graph, "Data")
        assert [op.attr["index"].i for op in data] == [0], data
        expected_shape = [-1 if case.dynamic and case.batch > 1 else case.batch, case.widths[0]]
        assert list(data[0].output_desc[0].shape.dim) == expected_shape, (data[0].output_desc[0], case)
        assert data[0].output_desc[0].dtype == ge_ir.proto_dtype(case.dtype)

        ops = {op.name: op for op in graph.op}
        for fqn, t in weights.items():
            if case.external:
                checks.assert_file_constant_holds(ops[fqn], t, out, fqn)
            else:
                checks.assert_const_holds(ops[fqn], t)
        weight_files = checks.files_under(out) - {"export.air", "dynamo.pbtxt", "options.json"}
        expected_files = {fqn.replace(".", "_") for fqn in weights} if case.external else set()
        assert weight_files == expected_files, f"weight files {sorted(weight_files)}, expected {sorted(expected_files)}"
        net_output = checks.ops_of(graph, "NetOutput")
        assert len(net_output) == 1 and len(net_output[0].input) == 1, net_output
