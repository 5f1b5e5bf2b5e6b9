"""The nightly's performance gate (SPEC BE-4): did this run, or this CANN release, get slower than its own noise?

Pure functions over history records. The rule (the README's "The gate" says why this one):

- **What is judged:** the implementation's figures normalised within the run, each the median over the rounds of a
  per-round ratio of two variants measured in the same process pool (`FIGURES`: warm TTFO ÷ eager TTFO, warm load ÷
  cold compile, cold TTFO ÷ eager TTFO, warm steady call ÷ eager steady call). A slower host slows both sides of a
  ratio, so it does not fire; a baseline's own figure is never judged.
- **Against what:** the series' own history (`window`: its last `WINDOW` normal nights) and, on an NPU, the previous
  CANN version's series of the same SoC, model and implementation (`cann`: its last `WINDOW` normal nights).
- **When it is a change:** tonight's value exceeds the baseline's median by more than the larger of a floor
  (`threshold`, 10 %) and `sigmas` times an upper bound of the baseline's own noise: a robust spread (1.4826 × the
  median absolute deviation of the logarithms of its nights' values) times 1 + 2/sqrt(nights).
- **When it is a regression:** a change is "suspected" on its first night, or while the baseline has fewer than
  `MIN_HISTORY` nights; a "regression" (red) when the previous night exceeded the same baseline too, or, with enough
  history, at once when large (`LARGE`, and twice the limit). Nights that exceeded stay out of later baselines (a
  slowdown stays red until fixed or accepted; an accepted one becomes the new normal).

Shown, not judged: busy hosts, series without a run tonight (before `since`, else `NIGHT` before the newest run),
other legs' series, and changes accepted in the reviewed `reports/accepted-changes.json` (`load_accepted`).
"""
from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from packaging.version import InvalidVersion, Version

from torchair_conformance.errors import ConformanceError
from torchair_conformance.report import cann
from torchair_conformance.report import legs as legs_mod

BUSY_LOAD_PER_CPU = 1.0  # busy: a 1-minute load average (start or end) above this many times the CPU count
DEFAULT_CPUS = 2  # the CPU count assumed for records that did not note theirs
NIGHT = timedelta(hours=24)  # without `since`: how long before the newest run the latest night began
WINDOW = 20  # the normal nights a baseline (and its noise) is taken from
MIN_HISTORY = 8  # fewer baseline nights and a change is only suspected
SIGMAS, FLOOR = 3.5, 0.10  # a change exceeds the larger of FLOOR and SIGMAS x the baseline's noise
LARGE = 0.50  # a change confirmed on its first night
_MAD_SIGMA = 1.4826  # MAD -> standard deviation of a normal distribution

@dataclass(frozen=True)
class Figure:
    """A judged figure: the per-round ratio of one variant's metric to another's, in one run."""
    key: str
    label: str
    variant: str
    metric: str
    den_variant: str
    den_metric: str
    def value(self, run: Mapping[str, Sequence[Mapping[str, Any]]]) -> float | None:
        """The median of the paired per-round ratios (the ratio of the medians when the rounds do not pair)."""
        num = [float(s[self.metric]) for s in run.get(self.variant, []) if _number(s.get(self.metric))]
        den = [float(s[self.den_metric]) for s in run.get(self.den_variant, []) if _number(s.get(self.den_metric))]
        if not num or not den:
            return None
        if len(num) == len(den) and all(d > 0 for d in den):
            return statistics.median(n / d for n, d in zip(num, den))
        den_median = statistics.median(den)
        return statistics.median(num) / den_median if den_median > 0 else None


FIGURES = (
    Figure("warm-ttfo", "warm TTFO ÷ eager TTFO", "impl-warm", "ttfo_s", "eager", "ttfo_s"),
    Figure("warm-load", "warm load ÷ cold compile", "impl-warm", "compile_or_load_s", "impl-cold", "compile_or_load_s"),
    Figure("cold-ttfo", "cold TTFO ÷ eager TTFO", "impl-cold", "ttfo_s", "eager", "ttfo_s"),
    Figure("warm-steady", "warm steady call ÷ eager steady call", "impl-warm", "steady_s", "eager", "steady_s"),
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
    """One figure of a series' latest run against one baseline, and what the gate made of it."""
    kind: str  # "window" | "cann"
    series: tuple
    run: RunView
    figure: Figure
    value: float
    baseline: float
    baseline_label: str
    noise: float  # the baseline's robust relative spread
    limit: float  # the relative change that counts: max(floor, sigmas x noise)
    nights: int  # the nights the baseline holds
    status: str  # "regression" | "suspected" | "ok" | "not gated" | "accepted"
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
        fields = {**dict(run.bench), **dict(run.env), "run_id": run.run_id}
        return all(str(fields.get(k)) == str(v) for k, v in self.match.items())


class AcceptedError(ConformanceError, ValueError):
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
            raise AcceptedError(f"{path} accepted[{i}]: needs 'figure' (one of {sorted(known)}), a non-empty "
                                f"'match' object, a 'reason' and 'reviewed': {entry!r:.200}")
        out.append(Accepted(entry["figure"], dict(entry["match"]), entry["reason"], entry["reviewed"]))
    return out


def parse_date(date: str) -> datetime:
    return datetime.strptime(date, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)


def version_key(version: Any) -> tuple:
    """A torch or torch-npu version for sorting (`packaging.version` order, unparsable ones last); CANN versions sort
    with `cann.sort_key`."""
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
    """Why a run is shown but not judged (a busy host), else None; any number of rounds is judged (the noise comes
    from the series' nights)."""
    return busy(run)


def comparison_group(env: Mapping[str, Any], bench: Mapping[str, Any]) -> tuple:
    """Series that CANN versions are compared across: same implementation, device, SoC, threads and benchmark."""
    return (tuple((k, env.get(k)) for k in ("impl", "device", "soc", "threads"))
            + tuple((k, bench.get(k)) for k in ("model", "method", "mode", "dynamic", "compiler", "ge_cache")))


@dataclass(frozen=True)
class Rule:
    """The gate's numbers (the report's `--threshold`, `--sigmas`, `--window`, `--min-history`)."""
    floor: float = FLOOR
    sigmas: float = SIGMAS
    window: int = WINDOW
    min_history: int = MIN_HISTORY
    large: float = LARGE


@dataclass
class GateResult:
    """Every check of the series' latest runs, and the series not judged tonight."""
    checks: list[Check] = field(default_factory=list)
    #: series key -> why none of its checks are judged (stale, not a leg of the night), for the report
    stale: dict[tuple, str] = field(default_factory=dict)
    #: series key -> why a series run tonight has nothing to be compared with (no earlier night)
    unchecked: dict[tuple, str] = field(default_factory=dict)
    rule: Rule = field(default_factory=Rule)

    @property
    def fired(self) -> list[Check]:
        return [c for c in self.checks if c.fired]

    @property
    def judged(self) -> list[Check]:
        """The checks that compared tonight with a baseline."""
        return [c for c in self.checks if c.status != "not gated"]


def noise(values: Sequence[float]) -> float:
    """The robust relative spread of positive values: 1.4826 x the median absolute deviation of their logarithms."""
    logs = [math.log(v) for v in values]
    centre = statistics.median(logs)
    return _MAD_SIGMA * statistics.median(abs(v - centre) for v in logs)


@dataclass(frozen=True)
class _Step:
    """One night of a figure against a baseline, and whether it exceeded it."""
    run: RunView
    value: float
    baseline: float
    noise: float
    limit: float
    nights: int
    exceeded: bool


def _judge(run: RunView, value: float, base: Sequence[float], rule: Rule) -> _Step:
    centre, spread = statistics.median(base), noise(base)
    # a spread from few nights is uncertain (from 10 nights of ±15 % noise it comes out anywhere from 0.05 to 0.2):
    # the limit takes an upper bound of it, (1 + 2/sqrt(n)) times the estimate
    limit = max(rule.floor, math.expm1(rule.sigmas * spread * (1 + 2 / math.sqrt(len(base)))))
    return _Step(run, value, centre, spread, limit, len(base), value > centre * (1 + limit))


def walk(points: Sequence[tuple[RunView, float]], rule: Rule, covered: Any = lambda run: None,
         fixed: Sequence[float] | None = None) -> tuple[list[_Step], list[float]]:
    """Each night against the normal nights before it (or against `fixed`, another series' normal nights): the
    steps, and the normal values at the end. A night that exceeded a baseline of `min_history` nights waits: it
    joins the baseline when the next night does not exceed (noise), and stays out with the nights after it when that
    night exceeds too, or at once when large (a step: it stays red until fixed or `covered`, accepted)."""
    normal: list[float] = []
    steps: list[_Step] = []
    pending: float | None = None
    stepped = False
    for run, value in points:
        base = list(fixed) if fixed is not None else normal[-rule.window:]
        if not base:
            normal.append(value)
            continue
        step = _judge(run, value, base, rule)
        steps.append(step)
        if not (step.exceeded and step.nights >= rule.min_history) or covered(run):
            normal += ([pending] if pending is not None else []) + [value]
            pending, stepped = None, False
        elif stepped or pending is not None or value > step.baseline * (1 + max(rule.large, 2 * step.limit)):
            pending, stepped = None, True
        else:
            pending = value
    return steps, normal[-rule.window:]


def status(steps: Sequence[_Step], rule: Rule) -> tuple[str, str]:
    """The latest step's status and why: ok, suspected or regression (see the module docstring)."""
    last = steps[-1]
    change = last.value / last.baseline - 1
    if not last.exceeded:
        return "ok", ""
    if last.nights < rule.min_history:
        return "suspected", (f"+{change:.0%} beyond the limit, but the baseline has {last.nights} night(s); "
                             f"{rule.min_history} are needed to know its noise")
    if len(steps) > 1 and steps[-2].exceeded:
        return "regression", f"+{change:.0%}, beyond the limit (+{last.limit:.0%}) two nights running"
    if change > max(rule.large, 2 * last.limit):
        return "regression", f"+{change:.0%} on its first night: more than +{max(rule.large, 2 * last.limit):.0%}"
    return "suspected", f"+{change:.0%} on its first night: a regression if the next night confirms it"


def evaluate(series: Mapping[tuple, Sequence[RunView]], *, rule: Rule | None = None,
             accepted: Iterable[Accepted] = (), since: datetime | None = None,
             expected: Sequence[legs_mod.Leg] | None = None) -> GateResult:
    """BE-4: the checks of every series' latest run (`series`: key -> runs, oldest first). `since`: when tonight
    began (a series without a run since is stale); `expected`: the night's legs (another leg's series is not
    judged; CPU series belong to no leg)."""
    accepted = list(accepted)
    rule = rule or Rule()
    result = GateResult(rule=rule)
    if not series:
        return result
    newest = max(parse_date(runs[-1].date) for runs in series.values() if runs)
    tonight = since if since is not None else newest - NIGHT
    groups: dict[tuple, dict[str, list[RunView]]] = {}
    for runs in series.values():
        for run in runs:
            if run.env.get("cann"):
                by_cann = groups.setdefault(comparison_group(run.env, run.bench), {})
                by_cann.setdefault(cann.spelled(run.env["cann"]), []).append(run)
    for key, runs in series.items():
        if not runs:
            continue
        latest = runs[-1]
        leg = legs_mod.of_env(latest.env)
        skip = None
        if parse_date(latest.date) < tonight:
            skip = f"stale series: last run {latest.date}, none since {tonight:%Y-%m-%dT%H:%M:%SZ}"
        elif expected is not None and leg is not None and leg not in expected:
            skip = f"not a leg of this night ({leg.label})"
        if skip:
            result.stale[key] = skip
        skip = skip or not_gated(latest)
        found = [c for figure in FIGURES for c in _checks(key, runs, figure, rule, accepted, skip, groups)]
        result.checks += found
        if not found and key not in result.stale:
            result.unchecked[key] = "no earlier night to compare with (nights on a busy host are not judged)"
    return result


def _checks(key: tuple, runs: Sequence[RunView], figure: Figure, rule: Rule, accepted: Sequence[Accepted],
            skip: str | None, groups: Mapping[tuple, Mapping[str, Sequence[RunView]]]) -> list[Check]:
    latest = runs[-1]
    points = _points(runs, figure)
    if not points or points[-1][0] is not latest:
        return []

    def covered(run: RunView) -> Accepted | None:
        return next((a for a in accepted if a.covers(run, figure)), None)

    out = []
    steps, _ = walk(points, rule, covered)
    if steps:
        out.append(_check("window", key, figure, steps, f"{steps[-1].nights} earlier night(s) of this series", rule,
                          covered, skip))
    previous = previous_cann_runs(latest, groups)
    if previous:
        _, normal = walk(_points(previous, figure), rule, covered)
        if normal:
            mine = [p for p in points if cann.same(p[0].env.get("cann"), latest.env.get("cann"))]
            steps, _ = walk(mine, rule, covered, fixed=normal)
            label = f"CANN {previous[-1].env.get('cann')} ({len(normal)} night(s), last {previous[-1].date})"
            out.append(_check("cann", key, figure, steps, label, rule, covered, skip))
    return out


def _points(runs: Sequence[RunView], figure: Figure) -> list[tuple[RunView, float]]:
    values = ((run, figure.value(run.samples)) for run in runs if not_gated(run) is None or run is runs[-1])
    return [(run, value) for run, value in values if value is not None and value > 0]


def _check(kind: str, key: tuple, figure: Figure, steps: Sequence[_Step], label: str, rule: Rule, covered: Any,
           skip: str | None) -> Check:
    last = steps[-1]
    state, reason = status(steps, rule)
    covering = covered(last.run)
    if skip:
        state, reason = "not gated", skip
    elif state in ("regression", "suspected") and covering:
        state, reason = "accepted", f"{covering.reason} (reviewed: {covering.reviewed}); {reason}"
    return Check(kind, key, last.run, figure, last.value, last.baseline, label, last.noise, last.limit, last.nights,
                 state, reason)


def previous_cann_runs(run: RunView, groups: Mapping[tuple, Mapping[str, Sequence[RunView]]]) -> list[RunView]:
    """The runs, oldest first, of the CANN version just before `run`'s in `run`'s comparison group (none when it
    is the first)."""
    versions = groups.get(comparison_group(run.env, run.bench), {})
    mine = cann.sort_key(run.env.get("cann"))
    older = [v for v in versions if cann.sort_key(v) < mine]
    if not older:
        return []
    previous = max(older, key=cann.sort_key)
    return sorted(versions[previous], key=lambda r: (r.date, r.run_id))


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
