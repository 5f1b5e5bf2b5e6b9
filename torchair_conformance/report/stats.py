"""Summaries, ratios against the baselines and targets (SPEC BE-1). Pure functions; the gate is `gate`."""
from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

#: numeric sample fields that are not measurements
_NOT_METRICS = {"format", "steady_calls"}


def summarize(samples: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """BE-1: median, min, max and count of every numeric field the samples share."""
    samples = list(samples)
    if not samples:
        return {}
    names = [k for k, v in samples[0].items() if _is_number(v) and k not in _NOT_METRICS]
    summary = {}
    for name in names:
        values = [float(s[name]) for s in samples if _is_number(s.get(name))]
        if values:
            summary[name] = {"median": statistics.median(values), "min": min(values), "max": max(values),
                             "n": len(values)}
    traced = [s["traced"] for s in samples if isinstance(s.get("traced"), Mapping)]
    if traced:
        count = sum(1 for t in traced if did_trace(t))
        summary["traced_runs"] = {"median": count, "min": count, "max": count, "n": len(traced)}
    return summary


def did_trace(traced: Mapping[str, Any]) -> bool:
    """CC-14/BE-2: a run traced if Dynamo counted a graph or a frame, as the SPEC defines it (and as the suite
    checks). Importing Dynamo is not tracing: upstream TorchAir imports it with `import torchair`, so a warm start
    of upstream always has it loaded; whether a run imported Dynamo or Inductor stays in the record (`imported`)."""
    return bool(traced.get("unique_graphs") or traced.get("frames_total"))


def imported(traced: Mapping[str, Any]) -> bool:
    """Whether the run had Dynamo or Inductor imported (the reference's warm start imports neither)."""
    return bool(traced.get("dynamo_imported") or traced.get("inductor_imported"))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class Ratio:
    """A figure beside its baseline: `numerator / denominator` of two variants' medians."""

    name: str
    numerator: tuple[str, str]
    denominator: tuple[str, str]
    #: the reference's target (the ratio must be at most this), or None
    target: float | None = None


RATIOS = (
    Ratio("warm / cold compile-or-load", ("impl-warm", "compile_or_load_s"), ("impl-cold", "compile_or_load_s"),
          1 / 30),
    Ratio("warm / cold time to first output", ("impl-warm", "ttfo_s"), ("impl-cold", "ttfo_s")),
    Ratio("warm TTFO / eager TTFO", ("impl-warm", "ttfo_s"), ("eager", "ttfo_s"), 1.15),
    Ratio("warm TTFO / torch.compile (hot Inductor caches) TTFO", ("impl-warm", "ttfo_s"), ("inductor-hot", "ttfo_s")),
    Ratio("warm TTFO / aot_compile load TTFO", ("impl-warm", "ttfo_s"), ("aot-load", "ttfo_s"), 0.6),
    Ratio("cold TTFO / eager TTFO", ("impl-cold", "ttfo_s"), ("eager", "ttfo_s")),
    Ratio("cold TTFO / aot_compile save TTFO", ("impl-cold", "ttfo_s"), ("aot-save", "ttfo_s")),
    Ratio("warm steady call / eager steady call", ("impl-warm", "steady_s"), ("eager", "steady_s")),
    Ratio("warm steady call / torch.compile steady call", ("impl-warm", "steady_s"), ("inductor-hot", "steady_s")),
)
#: the reference's per-call overhead target, seconds (cached callable minus the graph called directly)
OVERHEAD_TARGET_S = 3e-6


@dataclass(frozen=True)
class RatioValue:
    ratio: Ratio
    value: float | None
    #: min/max of the per-round ratio where both variants ran every round (paired), else None
    low: float | None = None
    high: float | None = None

    @property
    def meets(self) -> bool | None:
        if self.ratio.target is None or self.value is None:
            return None
        return self.value <= self.ratio.target


def ratios(samples: Mapping[str, list[Mapping[str, Any]]]) -> list[RatioValue]:
    """Every `RATIOS` entry whose two variants ran: the ratio of medians, and the range of per-round ratios."""
    out = []
    for ratio in RATIOS:
        (num_variant, num_metric), (den_variant, den_metric) = ratio.numerator, ratio.denominator
        num = [s[num_metric] for s in samples.get(num_variant, []) if _is_number(s.get(num_metric))]
        den = [s[den_metric] for s in samples.get(den_variant, []) if _is_number(s.get(den_metric))]
        if not num or not den:
            continue
        den_median = statistics.median(den)
        value = statistics.median(num) / den_median if den_median else None
        low = high = None
        if len(num) == len(den) and len(num) > 1 and all(den):
            paired = [n / d for n, d in zip(num, den)]
            low, high = min(paired), max(paired)
        out.append(RatioValue(ratio, value, low, high))
    return out
