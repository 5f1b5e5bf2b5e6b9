"""``python -m torchair_ref.export.inspect``: summaries of .air files and their weight files (EX-6, EX-7)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

from tests.reference.export import checks, models
from torchair_ref.export import dynamo_export, externalize_threshold
from torchair_ref.export import inspect as air_inspect


def _cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "torchair_ref.export.inspect", *argv],
        env=checks.child_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def external(tmp_path):
    """An export of TwoLayer with its weights in files."""
    with externalize_threshold(0):
        dynamo_export(torch.randn(2, 4), model=models.TwoLayer(), export_path=str(tmp_path))
    return tmp_path


@pytest.mark.slow
def test_cli_on_a_good_file(external):
    """EX-7: the CLI reports op counts, inputs, dtypes and checked weight files, exit 0; --json says the same."""
    text = _cli(str(external / "export.air"))
    assert text.returncode == 0, text.stderr
    for line in ("2  MatMulV2", "[0] args_0  DT_FLOAT [2, 4]", "4 inline (Const, 40 bytes), 5 external",
                 f"fc1.weight  DT_FLOAT [8, 4]  {external / 'fc1_weight'}  128 bytes, ok"):  # fmt: skip
        assert line in text.stdout, f"{line!r} not in:\n{text.stdout}"
    as_json = _cli(str(external / "export.air"), "--json")
    assert as_json.returncode == 0, as_json.stderr
    summary = json.loads(as_json.stdout)
    assert summary["op_counts"]["FileConstant"] == 5 and summary["ok"] is True, summary
    assert summary["inputs"] == [{"name": "args_0", "index": 0, "dtype": "DT_FLOAT", "shape": [2, 4]}], summary


@pytest.mark.slow
def test_cli_on_a_bad_file(tmp_path):
    """EX-7: a file that is not a ModelDef gets a clear message and exit status 2."""
    bad = tmp_path / "bad.air"
    bad.write_bytes(b"\xff\xff\xff\xff not protobuf")
    result = _cli(str(bad))
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert f"error: {bad} is not a GE IR ModelDef protobuf" in result.stderr, result.stderr


@pytest.mark.parametrize(
    "content", [b"", b"hello world, plain text\n", b"\x0a\x03abc"], ids=["empty", "text", "no-graph"]
)
def test_files_without_a_graph_are_not_air(tmp_path, content, capsys):
    """EX-7: empty files, text and ModelDefs without a graph are refused with exit status 2."""
    path = tmp_path / "x.air"
    path.write_bytes(content)
    assert air_inspect.main([str(path)]) == 2
    assert "error:" in capsys.readouterr().err


def test_missing_file(tmp_path, capsys):
    """EX-7: a path that does not exist: exit status 2 and the reason."""
    assert air_inspect.main([str(tmp_path / "none.air")]) == 2
    assert "No such file" in capsys.readouterr().err


def test_missing_or_short_weight_file(external, capsys):
    """EX-7: a FileConstant whose file is gone or has the wrong size is reported, exit status 1."""
    os.remove(external / "fc2_bias")
    (external / "scale").write_bytes(b"\x00" * 5)
    assert air_inspect.main([str(external / "export.air")]) == 1
    out = capsys.readouterr().out
    assert f"fc2.bias  DT_FLOAT [3]  {external / 'fc2_bias'}  MISSING" in out, out
    assert f"scale  DT_FLOAT [3]  {external / 'scale'}  5 bytes, WRONG SIZE, expected 12" in out, out


def test_relative_file_path_is_taken_from_the_air_directory(external, monkeypatch, tmp_path_factory):
    """EX-7: a relative file_path (as other exporters may write) is resolved against the .air's directory."""
    model = checks.load_air(external / "export.air")
    for op in checks.ops_of(model.graph[0], "FileConstant"):
        op.attr["file_path"].s = os.path.basename(op.attr["file_path"].s.decode()).encode()
    (external / "relative.air").write_bytes(model.SerializeToString())
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    summary = air_inspect.summarize(str(external / "relative.air"))
    found = {w.name: (w.file_path, w.ok) for w in summary.weights}
    assert found["fc1.weight"] == (str(external / "fc1_weight"), True) and summary.ok, found


def test_inline_summary(tmp_path):
    """EX-7: inline weights are counted with their bytes."""
    model = models.TwoLayer(torch.float16)
    dynamo_export(torch.randn(2, 4, dtype=torch.float16), model=model, export_path=str(tmp_path))
    nbytes = sum(t.numel() * 2 for t in [*model.parameters(), *model.buffers()])
    summary = air_inspect.summarize(str(tmp_path / "export.air"))
    inline = {w.name: (w.kind, w.dtype, w.nbytes) for w in summary.weights}
    # 5 weights and the two Transposes' int64 perms (float16 linear layers take the bias in MatMulV2: no alpha)
    assert inline["fc1.weight"] == ("Const", "DT_FLOAT16", 64) and len(inline) == 7, inline
    nbytes += 2 * 16
    assert summary.dtypes["DT_FLOAT16"] > 0 and summary.ok, summary
    text = air_inspect.render_text(summary)
    assert f"constants: 7 inline (Const, {nbytes} bytes), 0 external" in text, text


def test_inspect_does_not_import_torch():
    """EX-7: reading an .air needs only protobuf: the inspect module loads without importing torch."""
    code = ("import sys, torchair_ref.export.inspect; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'torch'))")
    result = subprocess.run([sys.executable, "-c", code], env=checks.child_env(), capture_output=True, text=True,
                            timeout=60)  # fmt: skip
    assert result.returncode == 0 and result.stdout.strip() == "[]", (result.stdout[:500], result.stderr[-2000:])
