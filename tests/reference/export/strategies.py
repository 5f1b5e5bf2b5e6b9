"""Hypothesis strategies for export properties: small generated MLPs and how to export them."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tests.reference.export.models import MLP
from tests.reliability.faults import budget

# Every example traces a model with Dynamo (about a second each on a small CPU): the "compile" budget of the profile.
EXPORT_PROPERTY = settings(max_examples=budget("compile"), deadline=None, suppress_health_check=[HealthCheck.too_slow])

DTYPES = (torch.float32, torch.float16, torch.bfloat16)


@dataclass(frozen=True)
class MLPCase:
    widths: tuple[int, ...]
    dtype: torch.dtype
    tie: bool  # the last layer reuses the first layer's weight (one tensor under two names)
    external: bool  # export with the threshold at 0, so weights go to files
    dynamic: bool
    batch: int
    seed: int

    def build(self) -> tuple[MLP, torch.Tensor]:
        torch.manual_seed(self.seed)
        model = MLP(list(self.widths), self.dtype, tie=self.tie)
        return model, torch.randn(self.batch, self.widths[0], dtype=self.dtype)


@st.composite
def mlp_cases(draw: st.DrawFn) -> MLPCase:
    depth = draw(st.integers(1, 3), label="depth")
    widths = draw(st.lists(st.integers(1, 6), min_size=depth + 1, max_size=depth + 1), label="widths")
    tie = depth >= 2 and draw(st.booleans(), label="tie")
    if tie:  # the tied weight (w1 x w0) must fit the last layer: in w1, out w0
        widths[-1], widths[-2] = widths[0], widths[1]
    return MLPCase(
        widths=tuple(widths),
        dtype=draw(st.sampled_from(DTYPES), label="dtype"),
        tie=tie,
        external=draw(st.booleans(), label="external"),
        dynamic=draw(st.booleans(), label="dynamic"),
        # The input's width too: the export gives each dim its own symbol, so the weight fixes the width alone.
        batch=draw(st.integers(1, 4), label="batch"),
        seed=draw(st.integers(0, 2**16), label="seed"),
    )
