"""`python -m torchair_conformance bench` checks every argument before measuring and keeps what it measured (issue
10)."""
from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path

import pytest

from torchair_conformance.bench import cli, harness
from torchair_conformance.report import history


def run_cli(*argv: str) -> tuple[int, float]:
    started = time.monotonic()
    status = cli.main(list(argv))
    return status, time.monotonic() - started


def test_history_that_is_a_file_is_refused_before_measuring(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    afile = tmp_path / "history.jsonl"
    afile.write_text("", encoding="utf-8")
    status, took = run_cli("--history", str(afile), "--model", "tiny", "--rounds", "1")
    assert status == 2 and took < 5
    assert "is a file, not a folder" in capsys.readouterr().err


def test_unknown_impl_is_refused_before_measuring(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    status, took = run_cli("--impl", "nosuch_impl_module", "--history", str(tmp_path), "--rounds", "1")
    err = capsys.readouterr().err
    assert status == 2 and "--impl 'nosuch_impl_module': cannot import" in err, err
    assert "pass an importable module to --impl or $TORCHAIR_CONFORMANCE_IMPL" in err, err
    assert "round 1" not in err and not list(tmp_path.iterdir())


def test_module_without_the_surface_is_refused_as_the_suite_refuses_it(capsys: pytest.CaptureFixture,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCHAIR_CONFORMANCE_IMPL", "json")  # the suite's switch: --impl, else this variable
    status, _ = run_cli("--no-history", "--rounds", "1")
    err = capsys.readouterr().err
    assert status == 2 and "--impl 'json': 'json' is not an implementation of the IMPL-1 surface" in err, err
    assert "missing CompilerConfig" in err and "round 1" not in err, err


def test_json_in_a_missing_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    status, _ = run_cli("--json", str(tmp_path / "no" / "x.json"), "--no-history")
    assert status == 2 and "does not exist or is not writable" in capsys.readouterr().err


def test_salvage_writes_beside_the_history(tmp_path: Path) -> None:
    record = history.Record(run_id="r", date="2026-01-01T00:00:00Z", commit=None, env={}, bench={},
                            variant="eager", samples=[{"ttfo_s": 1.0}])
    cli.salvage([record], str(tmp_path), reason="test")
    (kept,) = tmp_path.glob("bench-unsaved-*.json")
    assert [history.Record.from_dict(d) for d in json.loads(kept.read_text(encoding="utf-8"))] == [record]
    assert history.load(tmp_path) == [], "the salvage is not a history file"


@pytest.mark.slow
def test_a_failing_worker_keeps_the_samples_measured_before_it(tmp_path: Path) -> None:
    # `json` imports but has no cache_compile: eager is measured, then the implementation's cold run fails.
    options = harness.Options(impl="json", model="tiny", rounds=1, baselines=("eager",), device="cpu",
                              overhead=False)
    with pytest.raises(harness.BenchError) as caught:
        harness.run(options, workdir=str(tmp_path))
    partial = caught.value.result
    assert partial is not None and len(partial.samples["eager"]) == 1
    assert partial.load_avg["end"] and partial.load_avg["cpus"]


@pytest.mark.parametrize("device, message", [
    ("npu", "error: --device npu: `import torch_npu` failed (ModuleNotFoundError"),
    ("cuda", "error: --device cuda: torch "),
])
def test_a_device_that_is_not_there_is_refused_before_measuring(device: str, message: str, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture) -> None:
    import torch

    if importlib.util.find_spec("torch_npu") is not None or torch.cuda.is_available():
        pytest.skip("this host has torch_npu or a CUDA device: the refusal is for hosts without them")
    status, _ = run_cli("--device", device, "--history", str(tmp_path), "--rounds", "1")
    err = capsys.readouterr().err
    assert status == 2 and message in err, err
    assert "round 1" not in err and "Traceback" not in err and not list(tmp_path.iterdir()), err


def test_the_published_history_only_when_asked() -> None:
    def folder(*argv: str) -> str | None:
        return cli.history_folder(cli.parser().parse_args(list(argv)))

    assert folder() == "bench-history" == cli.LOCAL_HISTORY
    assert folder("--publish") == cli.PUBLISHED_HISTORY == str(Path("reports", "history"))
    assert folder("--history", "reports/history") == "reports/history"
    assert folder("--no-history") is None
    for conflict in (["--publish", "--no-history"], ["--publish", "--history", "x"]):
        with pytest.raises(SystemExit):
            cli.parser().parse_args(conflict)
