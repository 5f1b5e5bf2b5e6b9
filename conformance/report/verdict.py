"""The night's verdict: the conformance results beside the benchmark gate (pure functions).

A night is red when a suite had a failed or errored test, a known divergence XPASSed (fixed upstream: its entry
must go), an implementation's results are missing or older than its latest benchmark run, or the gate fired.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Iterable, Mapping

from conformance.report import gate, matrix as matrix_mod

#: results finished this long before an implementation's latest benchmark run are stale (the suite runs first in
#: the nightly chain, so fresh results are a little older than the benchmarks)
STALE_AFTER = timedelta(hours=6)


@dataclass
class Verdict:
    problems: list[str] = field(default_factory=list)
    #: results column label -> why it is stale
    stale: dict[str, str] = field(default_factory=dict)

    @property
    def green(self) -> bool:
        return not self.problems


def latest_bench(runs: Iterable[gate.RunView]) -> dict[tuple[str, str | None], str]:
    """(implementation, CANN version) -> date of its latest benchmark run."""
    out: dict[tuple[str, str | None], str] = {}
    for run in runs:
        key = (str(run.env.get("impl")), run.env.get("cann"))
        if run.date > out.get(key, ""):
            out[key] = run.date
    return out


def stale_results(matrix: matrix_mod.Matrix, bench_dates: Mapping[tuple[str, str | None], str]) -> dict[str, str]:
    """Results columns older (by more than `STALE_AFTER`) than the latest benchmark run of the same implementation
    and CANN version: that environment was benchmarked later, so its suite wrote no results that night."""
    stale = {}
    for column in matrix.columns:
        bench = bench_dates.get((column.implementation, column.versions.get("cann")))
        if bench is None or column.finished is None:
            continue
        finished = datetime.fromtimestamp(column.finished, tz=timezone.utc)
        if finished < gate.parse_date(bench) - STALE_AFTER:
            stale[column.label] = (f"results of {column.finished_iso} are older than the latest benchmark run of "
                                   f"the same implementation and CANN ({bench})")
    return stale


def judge(matrix: matrix_mod.Matrix, checks: gate.GateResult,
          bench_dates: Mapping[tuple[str, str | None], str], *,
          required: Iterable[str] = ()) -> Verdict:
    """The night's verdict; `required` names implementations whose results must be present."""
    verdict = Verdict(stale=stale_results(matrix, bench_dates))
    for column in matrix.columns:
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
    present = {c.implementation for c in matrix.columns}
    for impl in required:
        if impl not in present:
            verdict.problems.append(f"conformance {impl}: results missing (no results document for it)")
    for check in checks.fired:
        verdict.problems.append(
            f"gate: {check.figure.label} {check.value:.4g} vs {check.baseline:.4g} ({check.baseline_label}), "
            f"x{check.factor:.2f}, p = {check.p_value:.2g} [{_series_name(check)}]")
    return verdict


def _series_name(check: gate.Check) -> str:
    env, bench = check.run.env, check.run.bench
    cann = f" CANN {env.get('cann')}" if env.get("cann") else ""
    return f"{env.get('impl')} {bench.get('model')}{cann} {env.get('soc')}"
