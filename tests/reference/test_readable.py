"""The reference's readable_cache text (RC-2); the contract (RC-1..RC-3) is checked by
torchair_conformance/test_readable.py."""
from __future__ import annotations

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


def test_text_layout_of_the_reference(cache_file: str) -> None:
    """The reference's RC-2 text: the rule line first, the name with its signature, the format version, a buffer's
    own role and the caller frame's heading (what RC-2 asks of any implementation is in
    torchair_conformance/test_readable.py)."""
    text = readable_cache(cache_file, print_output=False)
    assert text.splitlines()[0] == "=" * 100
    assert "name: Small.forward(self, x: " in text, text[:500]
    assert "format version: 1" in text and "buffer" in text and "options_string:" in text, text
    assert "caller frame" in text, text
