"""The reference's export weights (EX-6, EX-7): the threshold rule and its exact boundary, int8 buffers, shared, unused
and captured tensors, file-name collisions, its errors. Inline versus files per dtype is checked by
torchair_conformance/test_export_weights.py."""

from __future__ import annotations

import logging
import re

import pytest
import torch
from torch import nn

from tests.reference.export import checks, models
from torchair_ref.export import DEFAULT_THRESHOLD, dynamo_export, externalize_threshold
from torchair_ref.export import weights as weights_module


def _weights(model: nn.Module) -> dict[str, torch.Tensor]:
    return {**dict(model.named_parameters()), **dict(model.named_buffers())}


def test_default_threshold_value():
    """EX-6: the threshold is (2048 - 200) MiB unless overridden, and the override ends with its block."""
    assert DEFAULT_THRESHOLD == 1_937_768_448 == weights_module.current_threshold()
    with externalize_threshold(10):
        assert weights_module.current_threshold() == 10
        with externalize_threshold(0):
            assert weights_module.current_threshold() == 0
        assert weights_module.current_threshold() == 10
    assert weights_module.current_threshold() == DEFAULT_THRESHOLD


@pytest.mark.parametrize("bad", [-1, 1.5, True, "10"])
def test_threshold_override_validates(bad):
    """EX-6: the override takes a non-negative int."""
    with pytest.raises(ValueError, match="nbytes"):
        with externalize_threshold(bad):
            pass


@pytest.mark.parametrize("graph_bytes, weight_bytes, threshold, external", [
    (10, 5, 15, False), (10, 6, 15, True), (0, 0, 0, False), (1, 0, 0, True),
    (100, 1_937_768_348, DEFAULT_THRESHOLD, False), (101, 1_937_768_348, DEFAULT_THRESHOLD, True),
])  # fmt: skip
def test_rule_is_strictly_greater(graph_bytes, weight_bytes, threshold, external):
    """EX-6: weights go to files iff graph bytes + weight bytes > threshold."""
    assert weights_module.externalize(graph_bytes, weight_bytes, threshold) is external


def _logged_total(caplog) -> int:
    for record in caplog.records:
        m = re.search(r"graph (\d+) bytes \+ \d+ weights of (\d+) bytes", record.getMessage())
        if m:
            return int(m.group(1)) + int(m.group(2))
    raise AssertionError(f"no size line logged: {[r.getMessage() for r in caplog.records]}")


def test_threshold_boundary(tmp_path, caplog):
    """EX-6: at exactly graph bytes + weight bytes the weights stay inline; one byte less and all go to files."""
    model = models.WithInt8Buffer()
    x = torch.randn(2, 3)
    with caplog.at_level(logging.INFO, logger="torchair_ref"):
        dynamo_export(x, model=model, export_path=str(tmp_path / "probe"))
    total = _logged_total(caplog)
    kinds = {}
    for threshold in (total, total - 1):
        out = tmp_path / str(threshold)
        with externalize_threshold(threshold):
            dynamo_export(x, model=model, export_path=str(out))
        graph = checks.load_air(out / "export.air").graph[0]
        kinds[threshold] = {kind: len(checks.weight_ops(graph, kind)) for kind in ("Const", "FileConstant")}
    assert kinds[total] == {"Const": 2, "FileConstant": 0}, kinds
    assert kinds[total - 1] == {"Const": 0, "FileConstant": 2}, kinds


@pytest.mark.parametrize("external", [False, True], ids=["inline", "file"])
def test_int8_buffer_bytes(tmp_path, external):
    """EX-6: an int8 buffer is a weight like a parameter, its bytes exact."""
    model = models.WithInt8Buffer()
    with externalize_threshold(0 if external else DEFAULT_THRESHOLD):
        dynamo_export(torch.randn(2, 3), model=model, export_path=str(tmp_path))
    ops = {op.name: op for op in checks.load_air(tmp_path / "export.air").graph[0].op}
    for fqn, t in _weights(model).items():
        if external:
            checks.assert_file_constant_holds(ops[fqn], t, tmp_path, fqn)
        else:
            checks.assert_const_holds(ops[fqn], t)


def test_data_ops_are_reindexed(tmp_path):
    """EX-6: with weights replaced, the remaining Data ops are user inputs numbered 0..n-1."""
    with externalize_threshold(0):
        dynamo_export(torch.randn(2, 4), torch.randn(2, 4), model=models.TwoInputs(), export_path=str(tmp_path),
                      mask=torch.ones(2, 4))  # fmt: skip
    graph = checks.load_air(tmp_path / "export.air").graph[0]
    data = [(op.name, op.attr["index"].i) for op in checks.ops_of(graph, "Data")]
    assert data == [("args_0", 0), ("args_1", 1), ("kwargs_mask", 2)], data
    assert len(checks.ops_of(graph, "FileConstant")) == 2, checks.op_counts(graph)


class Strided(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3, 4).t())  # a transposed view: not contiguous

    def forward(self, x):
        return x @ self.w


def test_non_contiguous_weight_error_names_the_weight(tmp_path):
    """The reference's EX-6 error goes on to name the weight, and refuses before export_path is created."""
    with pytest.raises(AssertionError, match=r"^The value of inputs must be contiguous\. Weight 'w'"):
        dynamo_export(torch.randn(2, 4), model=Strided(), export_path=str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_shared_parameter_is_one_weight(tmp_path):
    """EX-6: one tensor registered under two names is one FileConstant and one file."""
    model = models.MLP([3, 5, 5, 3], tie=True)
    assert model.tied is model.layers[0].weight
    with externalize_threshold(0):
        dynamo_export(torch.randn(2, 3), model=model, export_path=str(tmp_path))
    graph = checks.load_air(tmp_path / "export.air").graph[0]
    names = sorted(op.name for op in checks.ops_of(graph, "FileConstant"))
    # layers.2.weight is not used (the last layer multiplies by the tied weight), so it is not a weight.
    expected = sorted(["tied", "layers.0.bias", "layers.1.weight", "layers.1.bias", "layers.2.bias"])
    assert names == expected, f"FileConstant ops {names}, expected {expected}"
    weight_files = checks.files_under(tmp_path) - {"export.air", "dynamo.pbtxt", "options.json"}
    assert weight_files == {n.replace(".", "_") for n in expected}, weight_files
    ops = {op.name: op for op in graph.op}
    checks.assert_file_constant_holds(ops["tied"], model.tied, tmp_path, "tied")


def test_unused_parameters_are_not_weights(tmp_path):
    """EX-6: only the parameters and buffers the graph uses are weights."""
    with externalize_threshold(0):
        dynamo_export(torch.randn(2, 4), model=models.Unexported(), export_path=str(tmp_path))
    assert checks.files_under(tmp_path) == {"export.air", "dynamo.pbtxt", "options.json", "used_weight", "used_bias"}


class CapturesConstants(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.plain = torch.tensor([3.0, 4.0])  # neither parameter nor buffer

    def forward(self, x):
        return self.lin(x) * self.plain + torch.tensor([1.0, 2.0])


def test_captured_non_weight_tensors_stay_inline(tmp_path):
    """EX-6: tensors the graph captures that are not parameters or buffers are inline Consts even when weights are
    externalised; they are not user inputs either."""
    model = CapturesConstants()
    with externalize_threshold(0):
        dynamo_export(torch.randn(3, 2), model=model, export_path=str(tmp_path))
    graph = checks.load_air(tmp_path / "export.air").graph[0]
    counts = checks.op_counts(graph)
    consts = checks.weight_ops(graph, "Const")
    assert (counts["Data"], counts["FileConstant"], len(consts)) == (1, 2, 2), dict(counts)
    datas = sorted(op.attr["value"].t.data for op in consts)
    assert datas == sorted([checks.storage_bytes(model.plain), checks.storage_bytes(torch.tensor([1.0, 2.0]))])


def test_colliding_weight_file_names_are_refused(tmp_path):
    """EX-6: two weights whose fqn maps to the same file name are an error naming both, not a silent overwrite."""
    model = nn.Module()
    model.a_b = nn.Parameter(torch.ones(2))
    model.a = nn.Module()
    model.a.b = nn.Parameter(torch.ones(2))
    model.forward = lambda x: x * model.a_b + model.a.b  # type: ignore[method-assign]
    with externalize_threshold(0), pytest.raises(ValueError, match=r"'a_b' and 'a.b'|'a.b' and 'a_b'"):
        dynamo_export(torch.randn(2), model=model, export_path=str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_symlinked_weight_file_is_refused(tmp_path, caplog):
    """EX-2/EX-6: a symlink where a weight file would go stops the export before anything is written."""
    out = tmp_path / "out"
    out.mkdir()
    target = tmp_path / "elsewhere"
    target.write_bytes(b"precious")
    (out / "fc1_weight").symlink_to(target)
    with caplog.at_level(logging.INFO, logger="torchair_ref"), externalize_threshold(0):
        assert dynamo_export(torch.randn(2, 4), model=models.TwoLayer(), export_path=str(out)) is None
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "fc1_weight" in errors[0], errors
    assert target.read_bytes() == b"precious" and sorted(p.name for p in out.iterdir()) == ["fc1_weight"]


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("external", [False, True], ids=["inline", "file"])
def test_cuda_weights(tmp_path, external):
    """EX-6/EX-7: weights on a CUDA device are stored as their exact bytes, like CPU ones."""
    model = models.TwoLayer(torch.bfloat16).cuda()
    with externalize_threshold(0 if external else DEFAULT_THRESHOLD):
        dynamo_export(torch.randn(2, 4, dtype=torch.bfloat16, device="cuda"), model=model, export_path=str(tmp_path))
    ops = {op.name: op for op in checks.load_air(tmp_path / "export.air").graph[0].op}
    for fqn, t in _weights(model).items():
        if external:
            checks.assert_file_constant_holds(ops[fqn], t.cpu(), tmp_path, fqn)
        else:
            checks.assert_const_holds(ops[fqn], t.cpu())
