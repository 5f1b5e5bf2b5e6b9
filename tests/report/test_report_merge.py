"""merge-history: the fan-in job folds the runners' history folders into one, appending only new records."""
from __future__ import annotations

import random
from pathlib import Path

from tests.report import nightly_sample as sample
from torchair_conformance.report import history, merge


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


def test_a_merge_that_adds_nothing_says_so(tmp_path: Path, capsys) -> None:
    history.append(tmp_path / "a", sample.night_records(1, "8.1.RC1", "2.6.0.post2", rng=random.Random(1)))
    assert merge.main([str(tmp_path / "a"), "--into", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"merge-history: nothing to add: {tmp_path / 'a'} holds every record of"), out


def test_into_a_file_is_refused_naming_it(tmp_path: Path, capsys) -> None:
    history.append(tmp_path / "a", sample.night_records(1, "8.1.RC1", "2.6.0.post2", rng=random.Random(1)))
    afile = tmp_path / "history.jsonl"
    afile.write_text("", encoding="utf-8")
    assert merge.main([str(tmp_path / "a"), "--into", str(afile)]) == 2
    err = capsys.readouterr().err
    assert f"--into {afile} is a file, not a history folder" in err and "Traceback" not in err, err
    assert merge.main([str(tmp_path / "a"), "--into", str(afile / "sub")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot append to {afile / 'sub'}"), err
    assert merge.main([str(tmp_path / "nope"), "--into", str(tmp_path / "b")]) == 2
    assert f"not history folders (missing, or not a folder): {tmp_path / 'nope'}" in capsys.readouterr().err


def test_a_bad_line_merges_nothing(tmp_path: Path, capsys) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "cann-x.jsonl").write_text("{}\n", encoding="utf-8")
    assert merge.main([str(tmp_path / "src"), "--into", str(tmp_path / "data")]) == 2
    assert "cann-x.jsonl:1" in capsys.readouterr().err and not (tmp_path / "data").exists()
