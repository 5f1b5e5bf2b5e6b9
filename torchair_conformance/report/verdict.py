"""The night's verdict: the conformance results beside the benchmark gate (pure functions; SPEC BE-4).

A night is red when a suite had a failed or errored test, a known divergence XPASSed (fixed upstream: its entry
must go), an expected leg (implementation x SoC x CANN x torch-npu, see `torchair_conformance.report.legs`) has no
results or no benchmarks from tonight, an implementation named in `Night.required` has no results from tonight, results
are older than a later benchmark run of the same environment, or the gate fired.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from torchair_conformance.report import cann as cann_mod
from torchair_conformance.report import gate
from torchair_conformance.report import legs as legs_mod
from torchair_conformance.report import matrix as matrix_mod

#: results finished this long before their environment's latest benchmark run are stale (the suite runs first in
#: the nightly chain, so fresh results are a little older than the benchmarks)
STALE_AFTER = timedelta(hours=6)


@dataclass(frozen=True)
class Night:
    """What the night is judged against.

    `since`: when tonight began (results and benchmarks from before it are not tonight's); None: `gate.NIGHT` before
    the newest benchmark run or results document. `expected`: the legs the matrix ran tonight; None: every leg seen
    before, less the `retired` ones. `required`: implementations that must have results from tonight.
    """

    since: datetime | None = None
    expected: Sequence[legs_mod.Leg] | None = None
    retired: Sequence[legs_mod.Retired] = ()
    required: Sequence[str] = ()


@dataclass
class Verdict:
    problems: list[str] = field(default_factory=list)
    #: results column label -> why it is stale
    stale: dict[str, str] = field(default_factory=dict)
    #: expected leg label -> what of it is missing tonight
    missing: dict[str, str] = field(default_factory=dict)
    #: results column label -> "last ran ...": a leg's results from before tonight (shown greyed, not counted)
    absent: dict[str, str] = field(default_factory=dict)
    #: when tonight began, as judged
    since: str | None = None

    def current(self, column: matrix_mod.Column) -> bool:
        """Whether a results column counts tonight (a CPU column always does; a leg's, when it ran tonight)."""
        return column.label not in self.absent

    @property
    def green(self) -> bool:
        return not self.problems


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _finished(column: matrix_mod.Column) -> datetime | None:
    return None if column.finished is None else datetime.fromtimestamp(column.finished, tz=timezone.utc)


def same_environment(column: matrix_mod.Column, env: Mapping[str, Any]) -> bool:
    """Whether a results document and a benchmark record ran in one environment: the same implementation, CANN and
    torch-npu, and the same torch and SoC (family) where both note them."""
    versions = column.versions
    if str(env.get("impl")) != column.implementation or not cann_mod.same(versions.get("cann"), env.get("cann")):
        return False
    if (versions.get("torch_npu") or None) != (env.get("torch_npu") or None):
        return False
    if versions.get("torch") and env.get("torch") and versions["torch"] != env["torch"]:
        return False
    return not (versions.get("soc") and env.get("soc")
                and legs_mod.soc_family(versions["soc"]) != legs_mod.soc_family(env["soc"]))


def stale_results(matrix: matrix_mod.Matrix, runs: Sequence[gate.RunView]) -> dict[str, str]:
    """Results columns older (by more than `STALE_AFTER`) than the latest benchmark run of the same environment:
    that environment was benchmarked later, so its suite wrote no results that night."""
    stale = {}
    for column in matrix.columns:
        finished = _finished(column)
        dates = [run.date for run in runs if same_environment(column, run.env)]
        if finished is None or not dates:
            continue
        if finished < gate.parse_date(max(dates)) - STALE_AFTER:
            stale[column.label] = (f"results of {column.finished_iso} are older than the latest benchmark run of "
                                   f"the same environment ({max(dates)})")
    return stale


def tonight_began(matrix: matrix_mod.Matrix, runs: Sequence[gate.RunView], night: Night) -> datetime | None:
    """`night.since`, else `gate.NIGHT` before the newest benchmark run or results document (None: nothing ran)."""
    if night.since is not None:
        return night.since
    moments = [gate.parse_date(run.date) for run in runs] + [f for f in map(_finished, matrix.columns) if f]
    return max(moments) - gate.NIGHT if moments else None


def missing_legs(matrix: matrix_mod.Matrix, runs: Sequence[gate.RunView], night: Night,
                 since: datetime | None) -> dict[str, str]:
    """Expected leg label -> what it lacks tonight (results, benchmarks or both), with when it last ran."""
    bench: dict[legs_mod.Leg, list[datetime]] = {}
    for run in runs:
        leg = legs_mod.of_env(run.env)
        if leg is not None:
            bench.setdefault(leg, []).append(gate.parse_date(run.date))
    results: dict[legs_mod.Leg, list[datetime]] = {}
    for column in matrix.columns:
        leg, finished = legs_mod.of_results(column.implementation, column.versions), _finished(column)
        if leg is not None and finished is not None:
            results.setdefault(leg, []).append(finished)
    if night.expected is not None:
        expected = list(dict.fromkeys(night.expected))
    else:
        expected = [leg for leg in dict.fromkeys([*bench, *results])
                    if not any(r.covers(leg) for r in night.retired)]
    missing = {}
    for leg in expected:
        lacking = [what for what, dates in (("results", results.get(leg, [])), ("benchmarks", bench.get(leg, [])))
                   if since is None or not any(d >= since for d in dates)]
        if not lacking:
            continue
        last = max([*results.get(leg, []), *bench.get(leg, [])], default=None)
        when = f"last ran {_iso(last)}" if last else "never ran"
        since_text = f" since {_iso(since)}" if since else ""
        missing[leg.label] = f"no {' and no '.join(lacking)}{since_text} ({when})"
    return missing


def absent_columns(matrix: matrix_mod.Matrix, since: datetime | None) -> dict[str, str]:
    """Results column label -> "last ran ...", for each leg's results that finished before `since` (CPU columns
    belong to no night, and a document without its finishing time cannot be placed: neither is ever absent)."""
    out = {}
    for column in matrix.columns:
        finished = _finished(column)
        if since is None or finished is None or legs_mod.of_results(column.implementation, column.versions) is None:
            continue
        if finished < since:
            out[column.label] = f"last ran {_iso(finished)}"
    return out


def judge(matrix: matrix_mod.Matrix, checks: gate.GateResult, runs: Iterable[gate.RunView],
          night: Night = Night(), since: datetime | None = None) -> Verdict:
    """The night's verdict over the results, the benchmark runs (`runs`, every record's view) and the gate.
    `since`: when tonight began (default `tonight_began`). Only tonight's results count: a leg's older results
    are shown as absent, and are a problem only as a missing expected leg."""
    runs = list(runs)
    since = since or tonight_began(matrix, runs, night)
    verdict = Verdict(stale=stale_results(matrix, runs), since=_iso(since) if since else None,
                      absent=absent_columns(matrix, since))
    verdict.missing = missing_legs(matrix, runs, night, since)
    for label, why in verdict.missing.items():
        verdict.problems.append(f"missing: {label}: {why}")
    for column in matrix.columns:
        if not verdict.current(column):
            continue
        counts = column.counts
        bad = ", ".join(f"{counts[o]} {o}" for o in matrix_mod.BAD_OUTCOMES if counts.get(o))
        if bad:
            hint = " (xpassed: a known divergence passed, fixed upstream: remove its entry)" if counts.get(
                "xpassed") else ""
            verdict.problems.append(f"conformance {column.label}: {bad}{hint}")
        elif column.exit_status not in (None, 0):
            verdict.problems.append(f"conformance {column.label}: the suite exited {column.exit_status}")
        if column.label in verdict.stale:
            verdict.problems.append(f"conformance {column.label}: stale: {verdict.stale[column.label]}")
    for impl in night.required:
        fresh = [c for c in matrix.columns if c.implementation == impl
                 and (since is None or (_finished(c) is not None and _finished(c) >= since))]
        if not fresh:
            older = [c.finished_iso for c in matrix.columns if c.implementation == impl and c.finished_iso]
            latest = f"; latest {max(older)}" if older else "; no results document for it"
            verdict.problems.append(f"conformance {impl}: results missing: none from tonight"
                                    f"{f' (since {_iso(since)})' if since else ''}{latest}")
    for check in checks.fired:
        verdict.problems.append(
            f"gate: {check.figure.label} {check.value:.4g} vs {check.baseline:.4g} ({check.baseline_label}), "
            f"x{check.factor:.2f}, limit +{check.limit:.0%} [{_series_name(check)}]: {check.reason}")
    return verdict


def _series_name(check: gate.Check) -> str:
    env, bench = check.run.env, check.run.bench
    cann = f" CANN {env.get('cann')}" if env.get("cann") else ""
    return f"{env.get('impl')} {bench.get('model')}{cann} {env.get('soc')}"
