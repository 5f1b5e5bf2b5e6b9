"""The nightly's performance gate (SPEC BE-4): did this run, or this CANN release, get slower?

Pure functions over history records. What is gated:

- the implementation's own figures (`FIGURES`: its warm and cold time to first output, its warm load and cold
  compile, its steady call) and its in-run ratios (warm/eager TTFO, warm/cold compile-or-load, paired per round);
  never a baseline's own figure (eager, torch.compile, aot_compile), which moves with the host, not with the code;
- two comparisons per series' latest run, both on the raw per-round samples with a one-sided Mann-Whitney U rank
  test (`scipy.stats.mannwhitneyu`): against a window of the series' earlier runs (`window`), and, on an NPU,
  against the latest run of the previous CANN version on the same SoC, model and implementation (`cann`);
- a change is a regression when the test's p-value is below `alpha`, the median grew by more than `threshold`
  times, and by more than the figure's absolute floor.

What is shown but not gated, with its reason: runs with fewer than `MIN_ROUNDS` rounds, runs on a busy host (load
average above the CPU count), series not run in the latest night (stale), and changes recorded as accepted in the
reviewed file `reports/accepted-changes.json` (see `load_accepted`).
"""
from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from packaging.version import InvalidVersion, Version
from scipy.stats import mannwhitneyu

from torchair_conformance.report import cann

#: BE-1: fewer rounds than this and a run is shown, not gated
MIN_ROUNDS = 5
#: a run is on a busy host when a 1-minute load average (start or end) exceeds this many times the CPU count
BUSY_LOAD_PER_CPU = 1.0
#: the CPU count assumed for records that did not note theirs
DEFAULT_CPUS = 2
#: runs this long before the newest run of the history still belong to the latest night
NIGHT = timedelta(hours=24)
#: the earlier runs of a series a run is compared with
WINDOW = 5


@dataclass(frozen=True)
class Figure:
    """A gated figure: one variant's metric, or the per-round ratio of two (`den_variant` set)."""

    key: str
    label: str
    variant: str
    metric: str
    floor: float = 0.0
    den_variant: str | None = None
    den_metric: str | None = None

    def samples(self, run: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[float]:
        """The figure's per-round values in one run (`variant -> samples`); paired ratios for a ratio figure."""
        num = [float(s[self.metric]) for s in run.get(self.variant, []) if _number(s.get(self.metric))]
        if self.den_variant is None:
            return num
        den = [float(s[self.den_metric]) for s in run.get(self.den_variant, []) if _number(s.get(self.den_metric))]
        if len(num) != len(den):
            return []
        return [n / d for n, d in zip(num, den) if d > 0]


FIGURES = (
    Figure("warm-ttfo", "warm time to first output", "impl-warm", "ttfo_s", 0.02),
    Figure("warm-load", "warm load (compile or load)", "impl-warm", "compile_or_load_s", 0.005),
    Figure("cold-ttfo", "cold time to first output", "impl-cold", "ttfo_s", 0.02),
    Figure("cold-compile", "cold compile", "impl-cold", "compile_or_load_s", 0.005),
    Figure("warm-steady", "warm steady call", "impl-warm", "steady_s", 1e-6),
    Figure("warm/eager-ttfo", "warm / eager TTFO (in-run ratio)", "impl-warm", "ttfo_s", 0.0, "eager", "ttfo_s"),
    Figure("warm/cold-load", "warm / cold compile-or-load (in-run ratio)", "impl-warm", "compile_or_load_s", 0.0,
           "impl-cold", "compile_or_load_s"),
)


@dataclass(frozen=True)
class RunView:
    """What the gate needs of one run of one series."""

    run_id: str
    date: str
    commit: str | None
    env: Mapping[str, Any]
    bench: Mapping[str, Any]
    samples: Mapping[str, Sequence[Mapping[str, Any]]]
    load_avg: Mapping[str, Any] | None = None

    @property
    def rounds(self) -> int:
        return len(self.samples.get("impl-warm", [])) or int(self.bench.get("rounds") or 0)


@dataclass(frozen=True)
class Check:
    """One comparison of a figure of a series' latest run with its baseline, and what the gate made of it."""

    kind: str  # "window" | "cann"
    series: tuple
    run: RunView
    figure: Figure
    value: float
    baseline: float
    baseline_label: str
    p_value: float
    status: str  # "regression" | "ok" | "not gated" | "accepted"
    reason: str = ""

    @property
    def factor(self) -> float:
        return self.value / self.baseline if self.baseline else float("inf")

    @property
    def fired(self) -> bool:
        return self.status == "regression"


@dataclass(frozen=True)
class Accepted:
    """An accepted change from the reviewed file: runs whose env/bench fields match `match`, one figure."""

    figure: str
    match: Mapping[str, str]
    reason: str
    reviewed: str

    def covers(self, run: RunView, figure: Figure) -> bool:
        if self.figure not in (figure.key, figure.label, "*"):
            return False
        fields = {**{k: v for k, v in run.bench.items()}, **{k: v for k, v in run.env.items()},
                  "run_id": run.run_id}
        return all(str(fields.get(k)) == str(v) for k, v in self.match.items())


class AcceptedError(ValueError):
    """The accepted-changes file is not what `load_accepted` reads; the message names the file and the entry."""


def load_accepted(path: str) -> list[Accepted]:
    """The reviewed file of accepted changes (none when `path` does not exist).

    Format: `{"accepted": [{"figure": "<FIGURES key or label, or *>", "match": {"impl": ..., "cann": ..., "soc":
    ..., "model": ...}, "reason": "...", "reviewed": "<PR or reviewer>"}]}`; `match` compares with the run's env
    and bench fields (and `run_id`) as strings.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return []
    except ValueError as exc:
        raise AcceptedError(f"{path}: not JSON: {exc}") from exc
    entries = data.get("accepted") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise AcceptedError(f"{path}: expected an object with an 'accepted' list")
    known = {f.key for f in FIGURES} | {f.label for f in FIGURES} | {"*"}
    out = []
    for i, entry in enumerate(entries):
        ok = (isinstance(entry, dict) and entry.get("figure") in known and isinstance(entry.get("match"), dict)
              and entry["match"] and isinstance(entry.get("reason"), str) and entry["reason"].strip()
              and isinstance(entry.get("reviewed"), str) and entry["reviewed"].strip())
        if not ok:
            raise AcceptedError(f"{path} accepted[{i}]: needs 'figure' (one of {sorted(k for k in known)}), a "
                                f"non-empty 'match' object, a 'reason' and 'reviewed': {entry!r:.200}")
        out.append(Accepted(entry["figure"], dict(entry["match"]), entry["reason"], entry["reviewed"]))
    return out


def parse_date(date: str) -> datetime:
    return datetime.strptime(date, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)


def version_key(version: Any) -> tuple:
    """A torch or torch-npu version for sorting: `packaging.version` order (2.6.0.post2 before 2.6.0.post10),
    unparsable ones last. CANN versions sort with `cann.sort_key`, which knows Ascend's pre-release builds."""
    if version is None:
        return (0, Version("0"), "")
    try:
        return (1, Version(str(version)), "")
    except InvalidVersion:
        return (2, Version("0"), str(version))


def busy(run: RunView) -> str | None:
    """Why the run's host was busy (1-minute load above the CPU count at the start or end), else None."""
    load = run.load_avg or {}
    cpus = load.get("cpus") or DEFAULT_CPUS
    peaks = [values[0] for values in (load.get("start"), load.get("end")) if isinstance(values, list) and values]
    if peaks and max(peaks) > BUSY_LOAD_PER_CPU * cpus:
        known = "" if load.get("cpus") else " (CPU count not recorded; assumed)"
        return f"busy host: 1-minute load {max(peaks):g} on {cpus} CPUs{known}"
    return None


def not_gated(run: RunView) -> str | None:
    """Why a run is shown but not gated (too few rounds, busy host), else None."""
    if run.rounds < MIN_ROUNDS:
        return f"{run.rounds} round(s), fewer than {MIN_ROUNDS}"
    return busy(run)


def comparison_group(env: Mapping[str, Any], bench: Mapping[str, Any]) -> tuple:
    """Series that CANN versions are compared across: same implementation, device, SoC, threads and benchmark."""
    return (tuple((k, env.get(k)) for k in ("impl", "device", "soc", "threads"))
            + tuple((k, bench.get(k)) for k in ("model", "method", "mode", "dynamic", "compiler", "ge_cache")))


@dataclass
class GateResult:
    """Every check of the series' latest runs, and the stale series."""

    checks: list[Check] = field(default_factory=list)
    #: series key -> why none of its checks are gated (stale), for the report
    stale: dict[tuple, str] = field(default_factory=dict)

    @property
    def fired(self) -> list[Check]:
        return [c for c in self.checks if c.fired]


def evaluate(series: Mapping[tuple, Sequence[RunView]], *, threshold: float = 1.10, alpha: float = 0.01,
             window: int = WINDOW, accepted: Iterable[Accepted] = ()) -> GateResult:
    """BE-4: the checks of every series' latest run (`series`: key -> runs, oldest first)."""
    accepted = list(accepted)
    result = GateResult()
    if not series:
        return result
    newest = max(parse_date(runs[-1].date) for runs in series.values() if runs)
    groups: dict[tuple, list[RunView]] = {}
    for runs in series.values():
        for run in runs:
            if run.env.get("cann"):
                groups.setdefault(comparison_group(run.env, run.bench), []).append(run)
    for key, runs in series.items():
        if not runs:
            continue
        latest = runs[-1]
        stale = None
        if parse_date(latest.date) < newest - NIGHT:
            stale = f"stale series: last run {latest.date}, not in the latest night ({newest:%Y-%m-%d})"
            result.stale[key] = stale
        skip = stale or not_gated(latest)
        earlier = [r for r in runs[:-1] if not_gated(r) is None][-window:]
        baselines = []
        if earlier:
            baselines.append(("window", earlier, f"{len(earlier)} earlier run(s) of this series"))
        previous = previous_cann_run(latest, groups.get(comparison_group(latest.env, latest.bench), []))
        if previous is not None:
            baselines.append(("cann", [previous], f"CANN {previous.env.get('cann')} (run {previous.date})"))
        for kind, base_runs, label in baselines:
            for figure in FIGURES:
                check = _compare(kind, key, latest, figure, base_runs, label, threshold, alpha)
                if check is None:
                    continue
                if skip:
                    check = _with(check, "not gated", skip)
                elif check.status == "regression":
                    covering = next((a for a in accepted if a.covers(latest, figure)), None)
                    if covering:
                        check = _with(check, "accepted", f"{covering.reason} (reviewed: {covering.reviewed})")
                result.checks.append(check)
    return result


def previous_cann_run(run: RunView, group: Sequence[RunView]) -> RunView | None:
    """The latest run of the CANN version just before `run`'s, in `run`'s comparison group (gateable runs first)."""
    mine = cann.sort_key(run.env.get("cann"))
    older = [r for r in group if cann.sort_key(r.env.get("cann")) < mine]
    if not older:
        return None
    previous = max(cann.sort_key(r.env.get("cann")) for r in older)
    candidates = sorted((r for r in older if cann.sort_key(r.env.get("cann")) == previous),
                        key=lambda r: (not_gated(r) is None, r.date, r.run_id))
    return candidates[-1]


def _compare(kind: str, key: tuple, run: RunView, figure: Figure, base_runs: Sequence[RunView], label: str,
             threshold: float, alpha: float) -> Check | None:
    current = figure.samples(run.samples)
    base = [v for r in base_runs for v in figure.samples(r.samples)]
    if not current or not base:
        return None
    value, baseline = statistics.median(current), statistics.median(base)
    p_value = float(mannwhitneyu(current, base, alternative="greater").pvalue)
    slower = value > threshold * baseline and value - baseline > figure.floor
    status = "regression" if slower and p_value < alpha else "ok"
    reason = ""
    if slower and status == "ok":
        reason = f"slower but not significant (p = {p_value:.2g} ≥ {alpha:g})"
    return Check(kind, key, run, figure, value, baseline, label, p_value, status, reason)


def _with(check: Check, status: str, reason: str) -> Check:
    return Check(check.kind, check.series, check.run, check.figure, check.value, check.baseline,
                 check.baseline_label, check.p_value, status, reason)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
