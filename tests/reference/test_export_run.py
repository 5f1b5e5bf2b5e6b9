"""``python -m torchair_ref.export.inspect FILE.air --run INPUTS.npz [--compare EXPECTED.npz]`` (EX-11 on a laptop):
the outputs of an export, the difference from expected ones, and exit 2 with a message (never a traceback, never an
unbounded run) for hostile graphs and inputs."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest
import torch

from ge_executor import ge_ir
from tests.ge_executor.graphs import Builder
from tests.reference.export import checks, models
from torchair_ref.export import dynamo_export, externalize_threshold, run_graph


def _cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchair_ref.export.inspect", *map(str, argv)],
                          env=checks.child_env(), capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("external", [False, True], ids=["inline", "files"])
def test_run_prints_the_outputs_and_their_difference(tmp_path, external):
    """EX-11: --run prints each output; --compare the max difference from the eager outputs, which is 0 here."""
    model, x = models.TwoLayer(), torch.randn(2, 4)
    with externalize_threshold(0 if external else 1 << 40):
        dynamo_export(x, model=model, export_path=str(tmp_path))
    np.savez(tmp_path / "in.npz", x.numpy())
    np.savez(tmp_path / "want.npz", model(x).detach().numpy())
    done = _cli(tmp_path / "export.air", "--run", tmp_path / "in.npz", "--compare", tmp_path / "want.npz")
    assert done.returncode == 0, done.stderr
    assert "outputs (1):\n  [0] torch.float32 [2, 3]" in done.stdout, done.stdout
    assert _max_diff(done.stdout) < 1e-6, done.stdout  # MatMulV2 + Add rounds apart from addmm's fused add
    np.savez(tmp_path / "off.npz", model(x).detach().numpy() + 0.5)
    off = _cli(tmp_path / "export.air", "--run", tmp_path / "in.npz", "--compare", tmp_path / "off.npz")
    assert abs(_max_diff(off.stdout) - 0.5) < 1e-6, off.stdout


def _max_diff(text: str) -> float:
    return float(re.search(r"\[0\] max \|output - expected\| = (\S+)", text).group(1))


def _hostile(tmp_path, build) -> str:
    b = Builder()
    b.op("NetOutput", [build(b)])  # not Builder.output: that loads (and checks) the graph
    model = ge_ir.ModelDef(name="hostile")
    model.graph.extend([b.graph])
    path = tmp_path / "hostile.air"
    path.write_bytes(model.SerializeToString())
    return str(path)


def _broadcast_huge(b):
    x = b.data(torch.zeros(1), dims=[1])
    return f"{b.op('BroadcastTo', [x, b.const(torch.tensor([1 << 20, 1 << 20]))])}:0"


def _declares_huge(b):
    x = b.data(torch.zeros(1), dims=[1])
    b.graph.op[-1].output_desc[0].shape.dim[:] = [1 << 30, 1 << 30]
    return x


def _unknown_op(b):
    return f"{b.op('NoSuchOp', [b.data(torch.zeros(1), dims=[1])])}:0"


@pytest.mark.parametrize("build, message", [
    (_broadcast_huge, "cannot be run here"),
    (_declares_huge, "elements"),
    (_unknown_op, "NoSuchOp"),
], ids=["broadcast-to-1T-elements", "declared-1T-elements", "unknown-op"])
def test_hostile_graphs_exit_2_with_a_message(tmp_path, build, message):
    """--run on a graph that asks for too much, or for an op without a CPU kernel: exit 2, a message, no traceback,
    within the bounds (the 2**40-element broadcast fails against the memory limit, not after filling RAM)."""
    path = _hostile(tmp_path, build)
    np.savez(tmp_path / "in.npz", np.zeros(1, dtype=np.float32))
    done = _cli(path, "--run", tmp_path / "in.npz")
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert message in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_too_many_ops_are_refused(tmp_path, monkeypatch):
    """The op bound: a graph of more than MAX_RUN_OPS ops is refused before anything runs."""
    monkeypatch.setattr(run_graph, "MAX_RUN_OPS", 3)
    b = Builder()
    x = b.data(torch.zeros(1), dims=[1])
    for _ in range(3):
        x = f"{b.op('Relu', [x])}:0"
    b.op("NetOutput", [x])
    with pytest.raises(run_graph.RunRefused, match="at most 3"):
        run_graph.check_bounds(b.graph)


@pytest.mark.parametrize("content", [b"not a zip", b"PK\x03\x04garbage"])
def test_bad_inputs_exit_2(tmp_path, content):
    model, x = models.TwoLayer(), torch.randn(2, 4)
    dynamo_export(x, model=model, export_path=str(tmp_path))
    (tmp_path / "in.npz").write_bytes(content)
    done = _cli(tmp_path / "export.air", "--run", tmp_path / "in.npz")
    assert done.returncode == 2 and "not a readable .npz" in done.stderr and "Traceback" not in done.stderr, done
