"""Summaries and ratios against the baselines (BE-1); the gate is tests/report/test_report_gate.py."""
from __future__ import annotations

import pytest

from torchair_conformance.report import stats


def test_summary_is_median_min_max_and_counts_traced_runs() -> None:
    samples = [{"ttfo_s": t, "traced": {"dynamo_imported": t > 1, "unique_graphs": int(t > 2)},
                "compile_or_load_how": "log"} for t in (1, 3, 2)]
    summary = stats.summarize(samples)
    assert summary["ttfo_s"] == {"median": 2, "min": 1, "max": 3, "n": 3}
    assert summary["traced_runs"]["median"] == 1, "CC-14: a run that imported Dynamo but counted nothing did not trace"
    assert "compile_or_load_how" not in summary


def test_ratios_of_medians_with_paired_range_and_targets() -> None:
    samples = {"impl-warm": [{"ttfo_s": 1.0}, {"ttfo_s": 1.2}], "eager": [{"ttfo_s": 1.0}, {"ttfo_s": 0.8}]}
    (value,) = [v for v in stats.ratios(samples) if v.ratio.name == "warm TTFO / eager TTFO"]
    assert value.value == pytest.approx(1.1 / 0.9)
    assert (value.low, value.high) == pytest.approx((1.0, 1.5))
    assert value.meets is False and value.ratio.target == 1.15
    assert [v.ratio.name for v in stats.ratios(samples)] == ["warm TTFO / eager TTFO"]
