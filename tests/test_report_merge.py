"""merge-history: the fan-in job folds the runners' history folders into one, appending only new records."""
from __future__ import annotations

import random
from pathlib import Path

from conformance.report import history, merge
from tests import report_nightly_sample as sample


def test_merge_appends_only_new_records_and_keeps_earlier_lines(tmp_path: Path) -> None:
    rng = random.Random(4)
    old = sample.night_records(1, "8.1.RC1", "2.6.0.post2", rng=rng)
    a2, a3 = tmp_path / "a2", tmp_path / "a3"
    history.append(tmp_path / "data", old)
    history.append(a2, old + sample.night_records(2, "8.1.RC1", "2.6.0.post2", rng=rng))
    a3_new = sample.night_records(2, "8.2.RC1", "2.6.0.post3", rng=rng)
    history.append(a3, old + a3_new)
    before = (tmp_path / "data" / "cann-8.1.RC1.jsonl").read_bytes()
    assert merge.main([str(a2), str(a3), "--into", str(tmp_path / "data")]) == 0
    after = (tmp_path / "data" / "cann-8.1.RC1.jsonl").read_bytes()
    assert after.startswith(before) and after.count(b"\n") == 6
    assert len(history.load(tmp_path / "data")) == 9
    assert merge.main([str(a2), str(a3), "--into", str(tmp_path / "data")]) == 0
    assert len(history.load(tmp_path / "data")) == 9, "merging again adds nothing"


def test_a_bad_line_merges_nothing(tmp_path: Path, capsys) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "cann-x.jsonl").write_text("{}\n", encoding="utf-8")
    assert merge.main([str(tmp_path / "src"), "--into", str(tmp_path / "data")]) == 2
    assert "cann-x.jsonl:1" in capsys.readouterr().err and not (tmp_path / "data").exists()
