"""The history store (BE-3, BE-4): append-only JSONL, one file per CANN version, else per device and torch."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from torchair_conformance.report import history

ENV = {"impl": "torchair_ref", "impl_version": "0.1.0", "torch": "2.13.0+cpu", "torch_npu": None, "cann": None,
       "device": "cpu", "soc": "cpu", "python": "3.11.7", "host": "h", "threads": 1}
BENCH = {"model": "tiny", "method": "prompt", "mode": "max-autotune", "dynamic": True, "compiler": "eager",
         "ge_cache": True, "rounds": 1}


def record(run_id: str, env: dict = ENV, **summary: float) -> history.Record:
    return history.Record(run_id=run_id, date=f"2026-01-0{run_id}T00:00:00Z", commit="c" * 40, env=env,
                          bench=BENCH, variant="impl-warm",
                          summary={k: {"median": v, "min": v, "max": v, "n": 1} for k, v in summary.items()})


def test_file_per_cann_version_else_per_device_and_torch() -> None:
    assert history.file_name(ENV) == "cpu-torch-2.13.0+cpu.jsonl"
    assert history.file_name({**ENV, "device": "npu", "cann": "8.1.RC1"}) == "cann-8.1.RC1.jsonl"
    assert history.file_name({**ENV, "torch": "2.6/../x"}) == "cpu-torch-2.6_.._x.jsonl"


def test_append_keeps_earlier_lines_byte_for_byte(tmp_path: Path) -> None:
    (path,) = history.append(tmp_path, [record("1", ttfo_s=1.0)])
    before = path.read_bytes()
    history.append(tmp_path, [record("2", ttfo_s=2.0)])
    after = path.read_bytes()
    assert after.startswith(before) and after.count(b"\n") == 2
    assert [r.run_id for r in history.load(tmp_path)] == ["1", "2"]


def test_records_round_trip_and_share_a_key_across_hosts(tmp_path: Path) -> None:
    history.append(tmp_path, [record("1", ttfo_s=1.0), record("2", env={**ENV, "host": "other"}, ttfo_s=1.0)])
    first, second = history.load(tmp_path)
    assert first == record("1", ttfo_s=1.0)
    assert first.key() == second.key()
    assert first.key() != record("3", env={**ENV, "torch": "2.14.0"}).key()


def test_bad_line_names_file_and_line(tmp_path: Path) -> None:
    history.append(tmp_path, [record("1", ttfo_s=1.0)])
    path = tmp_path / history.file_name(ENV)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"format": 99}\n')
    with pytest.raises(history.HistoryError, match=rf"{re.escape(path.name)}:2: .*format 99"):
        history.load(tmp_path)
