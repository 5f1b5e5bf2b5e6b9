"""readable_cache (RC-1..RC-3)."""
from __future__ import annotations

import ast
import os
import stat
from pathlib import Path

import pytest
import torch

import torchair_ref
from torchair_ref.inference import cache_compile, readable_cache


class Small(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(3, 3)
        self.register_buffer("shift", torch.ones(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x) + self.shift


@pytest.fixture
def cache_file() -> str:
    config = torchair_ref.CompilerConfig()
    config.debug.run_eagerly = True
    cached = cache_compile(Small().forward, config=config)
    cached(torch.randn(2, 3))
    return cached.cache_file


def test_missing_and_symlink_are_refused(tmp_path: Path, cache_file: str) -> None:
    """RC-1: a missing file and a symlink are ValueErrors with the documented wording."""
    with pytest.raises(ValueError, match=r"Cache file .*nothing is not exists"):
        readable_cache(str(tmp_path / "nothing"))
    link = tmp_path / "link"
    link.symlink_to(cache_file)
    with pytest.raises(ValueError, match="can not be a symlink"):
        readable_cache(str(link))


def test_load_errors_propagate_and_delete_nothing(cache_file: str) -> None:
    """RC-1: a damaged file raises and is left in place."""
    Path(cache_file).write_bytes(Path(cache_file).read_bytes()[:-5])
    with pytest.raises(ValueError):
        readable_cache(cache_file, print_output=False)
    assert os.path.exists(cache_file)


def test_text_names_metadata_inputs_options_and_bytecode(cache_file: str, capsys: pytest.CaptureFixture) -> None:
    """RC-2: rule line, name with signature, date, version, input roles, options, disassembly; printed."""
    text = readable_cache(cache_file)
    assert capsys.readouterr().out.rstrip("\n") == text
    lines = text.splitlines()
    assert lines[0] == "=" * 100
    assert "name: Small.forward(self, x: " in text, text[:500]
    assert "date: " in text and "format version: 1" in text
    for role in ("parameter", "buffer", "user_input"):
        assert role in text, text
    assert "options_string:" in text, text
    assert "RETURN_VALUE" in text and "caller frame" in text, text


def test_file_output_is_private_valid_python(tmp_path: Path, cache_file: str) -> None:
    """RC-3: the file holds the text as # comments then the graph code; valid Python; mode 0600; parents made."""
    out = tmp_path / "deep" / "er" / "graph.py"
    text = readable_cache(cache_file, print_output=False, file=str(out))
    body = out.read_text()
    ast.parse(body)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    comment_lines = [line for line in body.splitlines() if line.startswith("#")]
    assert [line[2:] if len(line) > 1 else "" for line in comment_lines][: len(text.splitlines())] == [
        line.rstrip() for line in text.splitlines()
    ]
    assert "def forward(" in body


def test_file_output_refuses_symlinks_and_foreign_files(tmp_path: Path, cache_file: str) -> None:
    """RC-3: a symlinked output file, or one not 0600, is refused and left alone."""
    target = tmp_path / "target.py"
    target.write_text("keep me\n")
    link = tmp_path / "link.py"
    link.symlink_to(target)
    with pytest.raises(ValueError, match="symlink"):
        readable_cache(cache_file, print_output=False, file=str(link))
    target.chmod(0o644)
    with pytest.raises(ValueError, match="mode 0600"):
        readable_cache(cache_file, print_output=False, file=str(target))
    assert target.read_text() == "keep me\n"
