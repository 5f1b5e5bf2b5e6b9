"""`report --out DIR` replaces only what it wrote itself (its manifest), and refuses a folder of other files."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from torchair_conformance.report import outdir

SAMPLES = Path(__file__).parent / "data" / "report_samples"
ROOT = Path(__file__).resolve().parents[2]


def staged_render(tmp_path: Path, *names: str) -> Path:
    staged = tmp_path / "staged"
    for name in names:
        (staged / name).parent.mkdir(parents=True, exist_ok=True)
        (staged / name).write_text(f"rendered {name}", encoding="utf-8")
    return staged


def test_a_folder_of_other_files_is_refused_before_rendering(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("matplotlib", reason="the report needs the `report` extra")
    from torchair_conformance.report import cli

    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text("# my project\n", encoding="utf-8")
    assert cli.main(["--history", str(SAMPLES / "history"), "--out", str(project)]) == 2
    err = capsys.readouterr().err
    assert f"--out {str(project)!r} holds files the report did not write (README.md)" in err, err
    assert (project / "README.md").read_text(encoding="utf-8") == "# my project\n"
    assert sorted(p.name for p in project.iterdir()) == ["README.md"], "nothing rendered, nothing staged"


def test_the_published_report_folder_is_the_reports_own() -> None:
    """reports/ holds the history and results beside the pages: its manifest lists the report's files, which exist."""
    listed = outdir.read_manifest(ROOT / "reports")
    assert {"index.html", "README.md"} <= listed and all((ROOT / "reports" / name).is_file() for name in listed)
    assert outdir.check(ROOT / "reports") is None


def test_a_rerender_keeps_charts_it_did_not_write_and_drops_its_own_stale_ones(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = staged_render(tmp_path, "index.html", "charts/a-latest.png", "charts/b-latest.png")
    outdir.publish(first, out)
    (out / "charts" / "mine.png").write_bytes(b"someone else's chart")
    shutil.rmtree(first)
    second = staged_render(tmp_path, "index.html", "charts/a-latest.png")
    written = outdir.publish(second, out)
    assert sorted(p.relative_to(out).as_posix() for p in written) == ["charts/a-latest.png", "index.html"]
    assert sorted(p.name for p in (out / "charts").iterdir()) == ["a-latest.png", "mine.png"]
    assert json.loads((out / outdir.MANIFEST).read_text(encoding="utf-8")) == {
        "files": ["charts/a-latest.png", "index.html"]}


def test_a_rendered_name_taken_by_a_foreign_file_moves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    outdir.publish(staged_render(tmp_path, "index.html"), out)
    shutil.rmtree(tmp_path / "staged")
    (out / "verdict.json").write_text("mine", encoding="utf-8")
    with pytest.raises(outdir.OutDirError, match=r"verdict.json: not written by the report"):
        outdir.publish(staged_render(tmp_path, "index.html", "verdict.json"), out)
    assert (out / "verdict.json").read_text(encoding="utf-8") == "mine"
    assert (out / "index.html").read_text(encoding="utf-8") == "rendered index.html"


@pytest.mark.parametrize("layout, problem", [
    ({}, None),
    ({"history/cpu.jsonl": "x"}, None),
    ({"README.md": "x"}, "holds files the report did not write (README.md)"),
    ({outdir.MANIFEST: "{not json"}, "not a report manifest"),
])
def test_check(tmp_path: Path, layout: dict[str, str], problem: str | None) -> None:
    for name, text in layout.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    found = outdir.check(tmp_path)
    assert found is None if problem is None else problem in (found or ""), found
    assert outdir.check(tmp_path / "new" / "folder") is None
    (tmp_path / "afile").write_text("", encoding="utf-8")
    assert "is a file, not a folder" in (outdir.check(tmp_path / "afile") or "")


def test_manifest_entries_outside_the_folder_are_never_deleted(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "precious.txt").write_text("keep", encoding="utf-8")
    (out / outdir.MANIFEST).write_text(json.dumps({"files": ["../precious.txt", "/etc/passwd"]}), encoding="utf-8")
    outdir.publish(staged_render(tmp_path, "index.html"), out)
    assert (tmp_path / "precious.txt").exists()


def test_rendering_twice_through_the_cli_keeps_a_foreign_chart(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the report needs the `report` extra")
    from torchair_conformance.report import cli

    argv = ["--history", str(SAMPLES / "history"), "--conformance", str(SAMPLES / "conformance" / "*.json"),
            "--out", str(tmp_path / "out")]
    assert cli.main(argv) == 0
    listed = outdir.read_manifest(tmp_path / "out")
    assert "index.html" in listed and any(name.startswith("charts/") for name in listed)
    (tmp_path / "out" / "charts" / "mine.png").write_bytes(b"someone else's chart")
    assert cli.main(argv) == 0
    assert (tmp_path / "out" / "charts" / "mine.png").read_bytes() == b"someone else's chart"
    on_disk = {p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert on_disk == listed | {"charts/mine.png", outdir.MANIFEST}, "no staging folder is left behind"
