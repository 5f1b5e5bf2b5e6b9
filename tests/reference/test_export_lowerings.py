"""EX-7/EX-11 for the reference's lowerings, operator by operator (``tests/reference/export/lowering_cases.py``):
each small model exports with GE op types only, its graph holds the GE ops upstream's converter writes for the
operator, and the graph run on the GE executor gives the model's eager outputs (dtype and shape exactly, values
within float32 rounding). Attrs upstream writes are checked where the lowering sets them (Conv2D, max pooling,
select, IndexByTensor, SoftmaxV2, HardSigmoid, Cumsum); refusals name the operator, the reason and the coverage
table."""

from __future__ import annotations

import pytest
import torch

import ge_executor
from ge_executor import ge_ir
from tests.reference.export import checks
from tests.reference.export.lowering_cases import REFUSED, ROWS, Case, Fn, X, cases, set_rows
from torchair_ref.export import dynamo_export
from torchair_ref.export.ge_build import UnsupportedOperatorError

CASES = {case.name: case for case in cases()}


def _export(tmp_path, case: Case):
    torch._dynamo.reset()
    dynamo_export(*case.inputs, model=case.model.eval(), export_path=str(tmp_path), dynamic=case.dynamic)
    return checks.load_air(tmp_path / "export.air").graph[0]


def _flat(value) -> list[torch.Tensor]:
    return list(value) if isinstance(value, (tuple, list)) else [value]


@pytest.mark.parametrize("name", list(CASES))
def test_the_lowering_writes_upstreams_ge_ops_and_computes_the_model(tmp_path, name):
    case = CASES[name]
    graph = _export(tmp_path, case)
    types = set(checks.op_counts(graph))
    assert case.ge_types <= types, f"{name}: expected GE ops {sorted(case.ge_types - types)} in {sorted(types)}"
    aten = sorted(t for t in types if "." in t or t.startswith(("aten", "prims")))
    assert not aten, f"{name}: op types that are operator names: {aten}"
    with torch.no_grad():
        want = _flat(case.model(*case.inputs))
    got = ge_executor.load(graph, weights_dir=tmp_path).run([t for t in case.inputs if isinstance(t, torch.Tensor)])
    assert len(got) == len(want), f"{name}: {len(got)} outputs, eager has {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        assert (g.dtype, g.shape) == (w.dtype, w.shape), f"{name} output {k}: {g.dtype} {g.shape}, eager {w.dtype} " \
                                                         f"{w.shape}"
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5, equal_nan=True, msg=f"{name} output {k}")


def _op(graph, op_type):
    found = checks.ops_of(graph, op_type)
    assert len(found) == 1, f"{op_type}: {len(found)} ops in {dict(checks.op_counts(graph))}"
    return found[0]


def test_conv2d_attrs_and_nchw_layouts(tmp_path):
    """convolution.py:20-31: strides/dilations [1, 1, h, w], pads [ph, ph, pw, pw], groups, data_format NCHW,
    offset_x 0; x, filter, bias and y described in layout NCHW (specific_op_input_layout)."""
    op = _op(_export(tmp_path, CASES["conv2d"]), "Conv2D")
    attrs = {k: list(op.attr[k].list.i) for k in ("strides", "pads", "dilations")}
    assert attrs == {"strides": [1, 1, 2, 2], "pads": [1, 1, 1, 1], "dilations": [1, 1, 1, 1]}, attrs
    assert (op.attr["groups"].i, op.attr["data_format"].s, op.attr["offset_x"].i) == (2, b"NCHW", 0)
    assert [d.layout for d in op.input_desc] == ["NCHW", "NCHW", "NCHW", ""] and op.output_desc[0].layout == "NCHW"


def test_max_pool_attrs_in_the_four_entry_form(tmp_path):
    """max_pool2d_with_indices.py:47-62: ksize, strides, pads, dilation as [1, h, w, 1]; dtype 3; ceil_mode."""
    op = _op(_export(tmp_path, CASES["max-pool"]), "MaxPoolWithArgmaxV1")
    attrs = {k: list(op.attr[k].list.i) for k in ("ksize", "strides", "pads", "dilation")}
    assert attrs == {"ksize": [1, 3, 3, 1], "strides": [1, 2, 2, 1], "pads": [1, 1, 1, 1], "dilation": [1, 1, 1, 1]}
    assert (op.attr["dtype"].i, op.attr["ceil_mode"].b) == (3, False)


def test_select_counts_negative_indices_from_the_end(tmp_path):
    """select.py:17-20: GatherV2 with negative_index_support true, axis [dim]."""
    ops = checks.ops_of(_export(tmp_path, CASES["select"]), "GatherV2")
    assert ops and all(op.attr["negative_index_support"].b for op in ops), ops


def test_index_by_tensor_mask_and_softmax_axes(tmp_path):
    """index.py:5-9 (indices_mask: 1 per indexed dim) and _softmax.py:11-17 (axes [dim], half_to_float)."""
    assert list(_op(_export(tmp_path / "i", CASES["index"]), "IndexByTensor").attr["indices_mask"].list.i) == [1]
    softmax = checks.ops_of(_export(tmp_path / "s", CASES["softmax"]), "SoftmaxV2")
    assert sorted(list(op.attr["axes"].list.i) for op in softmax) == [[-1], [0]]
    assert not any(op.attr["half_to_float"].b for op in softmax)


def test_default_attrs_upstream_writes(tmp_path):
    """The generated GE op builders write every attr, defaults included: HardSigmoid's alpha and beta, Cumsum's
    exclusive and reverse, Log's base/scale/shift."""
    graph = _export(tmp_path / "h", CASES["hard-activations"])
    hard = _op(graph, "HardSigmoid")
    assert (round(hard.attr["alpha"].f, 6), hard.attr["beta"].f) == (0.166667, 0.5)
    cumsum = _op(_export(tmp_path / "c", CASES["cumsum"]), "Cumsum")
    assert (cumsum.attr["exclusive"].b, cumsum.attr["reverse"].b) == (False, False) and "exclusive" in cumsum.attr
    log = _op(_export(tmp_path / "l", CASES["unary-math"]), "Log")
    assert (log.attr["base"].f, log.attr["scale"].f, log.attr["shift"].f) == (-1.0, 1.0, 0.0)


def test_sort_histogram_and_grouped_matmul_attrs(tmp_path):
    """sort.py:16-33 (Sort along the last dim, ``axis`` positive, ``stable`` written false); Histogram's bins, min,
    max; GroupedMatmul as upstream's npu_grouped_matmul converter writes it (grouped_matmul.py:415-433): one tensor
    per list (x0, weight0, bias0, ...), int64 group_list, per_token_scale omitted, split_item 3, group_type 0."""
    sorts = checks.ops_of(_export(tmp_path / "s", CASES["sort"]), "Sort")
    assert sorted((op.attr["axis"].i, op.attr["descending"].b, op.attr["stable"].b) for op in sorts) == \
        [(2, False, False), (2, True, False)]
    hist = checks.ops_of(_export(tmp_path / "h", CASES["histc"]), "Histogram")
    assert sorted((op.attr["bins"].i, op.attr["min"].f, op.attr["max"].f) for op in hist) == \
        [(3, 0.0, 0.0), (4, -2.0, 2.0), (5, -1.0, 1.0)]
    gmm = _op(_export(tmp_path / "g", CASES["grouped-mm"]), "GroupedMatmul")
    names = [d.name for d in gmm.input_desc]
    assert names == ["x0", "weight0", "bias0", "scale0", "offset0", "antiquant_scale0", "antiquant_offset0",
                     "group_list", "per_token_scale"] and gmm.input[-1] == "", (names, list(gmm.input))
    assert gmm.input_desc[7].dtype == ge_ir.proto_dtype(torch.int64)
    attrs = {k: gmm.attr[k].i for k in ("split_item", "group_type", "group_list_type", "dtype", "act_type")}
    assert attrs == {"split_item": 3, "group_type": 0, "group_list_type": 0, "dtype": -1, "act_type": 0}, attrs
    assert list(gmm.attr["tuning_config"].list.i) == [0] and not gmm.attr["transpose_weight"].b


@pytest.mark.parametrize("name,model,inputs,why", REFUSED, ids=[r[0] for r in REFUSED])
def test_a_refusal_names_the_operator_the_reason_and_the_coverage_table(tmp_path, name, model, inputs, why):
    torch._dynamo.reset()
    with pytest.raises(UnsupportedOperatorError, match=why) as caught:
        dynamo_export(*inputs, model=model.eval(), export_path=str(tmp_path))
    assert "aten." in str(caught.value) and "docs/ge-coverage.md" in str(caught.value), str(caught.value)


def test_an_operator_without_a_lowering_points_to_the_coverage_table(tmp_path):
    """EX-7: the refusal names the operator and the table of what upstream converts and the reference lowers."""
    torch._dynamo.reset()
    with pytest.raises(UnsupportedOperatorError, match=r"aten\.erfinv\.default has no GE lowering") as caught:
        dynamo_export(X.clamp(-0.5, 0.5), model=Fn(lambda m, x: torch.erfinv(x)), export_path=str(tmp_path))
    assert "docs/ge-coverage.md" in str(caught.value)


def test_expand_keeps_a_symbolic_dim_at_other_sizes(tmp_path):
    """EX-11: ``expand(-1, 3, -1)`` of a 4x5 input exported with dynamic=True (both dims symbolic) gives the model's
    output at 2x7: each -1 is that dim of the input at run time (it was refused for a symbolic dim)."""
    model = _Expands()
    dynamo_export(torch.randn(4, 5), model=model, export_path=str(tmp_path), dynamic=True)
    x = torch.randn(2, 7)
    graph = checks.load_air(tmp_path / "export.air").graph[0]
    (got,) = ge_executor.load(graph, weights_dir=tmp_path).run([x])
    torch.testing.assert_close(got, model(x))


class _Expands(torch.nn.Module):
    def forward(self, x):
        return x.unsqueeze(1).expand(-1, 3, -1) * 2


def test_index_put_of_a_scalar_at_other_sizes(tmp_path):
    """EX-11: ``y[i] = 0.5`` exported with dynamic=True at x 2x3x4 and two rows writes three rows of x 3x5x2 (the
    scalar's broadcast shape read at run time; it was refused for a symbolic indexed shape)."""
    model = Fn(lambda m, x, i: set_rows(x, i))
    dynamo_export(X, ROWS, model=model, export_path=str(tmp_path), dynamic=True)
    x, rows = torch.randn(3, 5, 2), torch.tensor([2, -3, 0])
    graph = checks.load_air(tmp_path / "export.air").graph[0]
    (got,) = ge_executor.load(graph, weights_dir=tmp_path).run([x, rows])
    torch.testing.assert_close(got, model(x, rows))
