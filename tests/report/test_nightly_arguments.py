"""`python -m torchair_conformance nightly` rejects a bad argument at once, naming it and the valid values, before the
suite's hour (issue 21): a real process, timed."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from torchair_conformance import nightly

ROOT = Path(__file__).resolve().parents[2]


def run_nightly(tmp_path: Path, *argv: str) -> tuple[subprocess.CompletedProcess, float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "impl"), str(ROOT)])}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "torchair_conformance", "nightly", *argv], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    return done, time.monotonic() - started


def test_a_misspelt_model_fails_at_once_naming_the_valid_ones(tmp_path: Path) -> None:
    done, took = run_nightly(tmp_path, "--impl", "torchair_ref", "--model", "tiny", "--model", "gpt-smal",
                             "--history", str(tmp_path / "h"), "--results", str(tmp_path / "r"),
                             "--out", str(tmp_path / "out"))
    assert done.returncode == 2, done.stderr[-2000:]
    assert "--model: unknown benchmark model 'gpt-smal'; did you mean gpt-small? known: tiny, gpt-small" in done.stderr
    assert "nightly: suite" not in done.stderr and took < 30, (took, done.stderr[-2000:])


@pytest.mark.parametrize("argv, message", [
    (["--impl", "torchair_nup"], "--impl 'torchair_nup': cannot import it: no such module on this Python's path"),
    (["--rounds", "0"], "--rounds must be at least 1, got 0"),
    (["--model", "my-model"], "--model: unknown benchmark model 'my-model'"),
    (["--history", "afile"], "--history 'afile': is a file, not a folder"),
    (["--out", "."], "--out '.' holds files the report did not write (README.md, afile)"),
    (["--model", "tests.bench.factories:no_such_method"],
     "--model tests.bench.factories:no_such_method: the method it returns must name a method of Mlp"),
])
def test_every_argument_is_checked_first(tmp_path: Path, argv: list[str], message: str,
                                         monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "README.md").write_text("# a project\n", encoding="utf-8")
    (tmp_path / "afile").write_text("", encoding="utf-8")
    defaults = {"--impl": "torchair_ref", "--history": "h", "--results": "r", "--out": "out"}
    defaults.update(dict(zip(argv[::2], argv[1::2])))
    assert nightly.main([x for pair in defaults.items() for x in pair]) == 2
    err = capsys.readouterr().err
    assert message in err and "nightly: suite" not in err, err


def test_the_night_benchmarks_a_realistic_model_too() -> None:
    args = nightly.parser().parse_args(["--impl", "torchair_npu"])
    assert nightly.bench_models(args) == ["tiny", "gpt-small", "llama-125m"]
    assert nightly.bench_models(nightly.parser().parse_args(["--impl", "x", "--model", "none"])) == []
