"""EX-2, EX-3, EX-6, EX-7: dynamo_export over existing files, into a read-only folder, with a weight file that cannot
be written, and with a symlink at any output.

Every export here puts every weight in a file (threshold 0), so one ``.air`` names five weight files. The outcome
checked: either a complete new export (the ``.air`` parses and every weight file holds the new bytes), or an
exception naming the target it could not write with the previous export untouched, or no ``.air`` at all; never an
``.air`` beside half-written or mixed weight files, never a temporary file left over.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
import torch

from tests.reference.export import checks, models
from tests.reliability.faults import immutable, run_fault_program, snapshot, temp_files
from torchair_ref.export import dynamo_export, externalize_threshold

WEIGHT_FILES = ["fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias", "scale"]
OUTPUTS = ["export.air", "dynamo.pbtxt", "options.json", *WEIGHT_FILES]


def export(out: Path, seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    model = models.TwoLayer()
    with externalize_threshold(0):
        dynamo_export(torch.randn(2, 4), model=model, export_path=str(out))
    return model


def assert_complete_export(out: Path, model: torch.nn.Module) -> None:
    """EX-6/EX-7: the .air parses and every FileConstant's file holds exactly this model's weight."""
    graph = checks.load_air(out / "export.air").graph[0]
    weights = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    ops = {op.name: op for op in checks.ops_of(graph, "FileConstant")}
    assert set(ops) == set(weights), f"FileConstant ops {sorted(ops)}, weights {sorted(weights)}"
    for fqn, tensor in weights.items():
        checks.assert_file_constant_holds(ops[fqn], tensor, out, fqn)
    assert not temp_files(out), f"temporary files left in {out}: {sorted(os.listdir(out))}"


@pytest.mark.reliability(
    "Export over existing files: a previous export with other weights, unrelated files at every output",
    "every output replaced whole: the new `.air` parses and each weight file holds the new bytes; no temp file",
)
@pytest.mark.parametrize("existing", ["previous export", "unrelated files"])
def test_export_over_existing_files(tmp_path: Path, existing: str) -> None:
    """EX-3, EX-6, EX-7: an export over existing files replaces each whole; the result is the new export only."""
    out = tmp_path / "out"
    if existing == "previous export":
        export(out, seed=1)
    else:
        out.mkdir()
        for name in OUTPUTS:
            (out / name).write_bytes(b"unrelated " * 100)
    assert_complete_export(out, export(out, seed=2))
    assert checks.files_under(out) == set(OUTPUTS), checks.files_under(out)


@pytest.mark.reliability(
    "Export: a directory where an output goes (`.air`, `dynamo.pbtxt`, a weight file)",
    "IsADirectoryError naming that path, before anything is written; the previous export untouched",
)
@pytest.mark.parametrize("target", ["export.air", "dynamo.pbtxt", "fc2_weight"])
def test_directory_at_an_output(tmp_path: Path, target: str) -> None:
    """EX-3: an output path that is a directory is refused by name before any file is written."""
    out = tmp_path / "out"
    export(out, seed=1)
    (out / target).unlink()
    (out / target).mkdir()
    before = snapshot(out)
    with pytest.raises(IsADirectoryError, match=str(out / target)):
        export(out, seed=2)
    assert snapshot(out) == before, f"files changed: {checks.files_under(out)}"


@pytest.mark.reliability(
    "Export into a read-only folder (chattr +i): empty, holding a previous export, or a missing `export_path` "
    "below a read-only folder",
    "an OSError naming the target; nothing written, the previous export untouched, no temp file",
)
@pytest.mark.parametrize("state", ["empty", "previous export", "missing below a read-only folder"])
def test_read_only_export_folder(tmp_path: Path, state: str) -> None:
    """EX-3: an export that cannot write raises an OSError naming where, and leaves the folder as it was."""
    out = tmp_path / "out"
    frozen = out
    if state == "previous export":
        export(out, seed=1)
    elif state == "empty":
        out.mkdir()
    else:
        frozen = tmp_path
    before = snapshot(tmp_path)
    with immutable(frozen):
        with pytest.raises(OSError) as caught:
            export(out, seed=2)
        after = snapshot(tmp_path)
    assert str(out) in str(caught.value), repr(caught.value)
    assert after == before, f"files changed: {checks.files_under(tmp_path)}"


@pytest.mark.reliability(
    "Export: a weight file that cannot be written (an existing one made immutable)",
    "an OSError naming that weight file; no `.air` left (so none names mixed weights); no temp file",
)
def test_weight_file_that_cannot_be_replaced(tmp_path: Path) -> None:
    """EX-6, EX-7: when one weight file cannot be replaced, no .air remains to pair old and new weights."""
    out = tmp_path / "out"
    export(out, seed=1)
    stuck = out / "fc2_bias"
    with immutable(stuck):
        with pytest.raises(OSError, match=str(stuck)):
            export(out, seed=2)
    assert not (out / "export.air").exists(), f"an .air remains beside mixed weights: {checks.files_under(out)}"
    assert not temp_files(out), sorted(os.listdir(out))


@pytest.mark.slow
@pytest.mark.reliability(
    "Export: RLIMIT_FSIZE below a weight file's size (fresh process), over a previous export",
    "an OSError (File too large) naming the weight file; the previous export untouched; no temp file",
)
def test_file_size_limit_during_the_export(tmp_path: Path) -> None:
    """EX-6: an export cut short while writing leaves the previous export whole and no temporary file."""
    out = tmp_path / "out"
    model = export(out, seed=1)
    before = snapshot(out)
    report = run_fault_program({"export": str(out), "seed": 2, "fsize": 64}, tmp_path)
    error = report["error"]
    assert error and "File too large" in error["message"] and str(out) in error["message"], error
    assert snapshot(out) == before, f"files changed: {checks.files_under(out)}"
    assert_complete_export(out, model)


@pytest.mark.reliability(
    "Export: a symlink at any output (`.air`, `dynamo.pbtxt`, a weight file), over a previous export",
    "EX-2: one ERROR line, `None`, nothing written, the symlink's target untouched",
)
@pytest.mark.parametrize("target", ["export.air", "dynamo.pbtxt", "fc1_weight"])
def test_symlink_at_an_output(tmp_path: Path, target: str, caplog: pytest.LogCaptureFixture) -> None:
    """EX-2: a symlink at any output path refuses the export with one ERROR line and writes nothing anywhere."""
    out = tmp_path / "out"
    export(out, seed=1)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"precious")
    (out / target).unlink()
    (out / target).symlink_to(elsewhere)
    before = snapshot(tmp_path)
    with caplog.at_level(logging.INFO, logger="torchair_ref"):
        assert export(out, seed=2) is not None  # the model; dynamo_export itself returned None without raising
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "symlink" in errors[0], errors
    assert snapshot(tmp_path) == before, f"files changed: {checks.files_under(tmp_path)}"
