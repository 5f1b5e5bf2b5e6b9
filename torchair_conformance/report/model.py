"""What the night says, gathered from the history, the gate, the verdict and the matrix (SPEC BE-4; pure).

The report answers two questions at a glance: did this release break or slow anything, and what does the cache
save? This module gathers the answers as data, `Report`, for the pages (`render`, through `context`) and the
machine-readable outputs (`outputs`): the series and their runs, the saving of each series run in the latest night
(cold → warm) with its change since the series' previous run, the regressions (one per slowed figure, its checks
beneath), the tests whose outcome changed since the previous night, each benchmark's latest run per version set and
per CANN version, and two CANN versions side by side (`compare`). It reads no file and knows no page: where the
pages link to and which charts they show are the renderer's.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from torchair_conformance.report import cann as cann_mod
from torchair_conformance.report import changes as changes_mod
from torchair_conformance.report import gate, history, stats
from torchair_conformance.report import legs as legs_mod
from torchair_conformance.report import matrix as matrix_mod
from torchair_conformance.report import verdict as verdict_mod

#: what a file name of the report's may not hold
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


@dataclass
class Run:
    """One bench invocation of one series: its records by variant."""

    run_id: str
    date: str
    commit: str | None
    env: dict[str, Any]
    bench: dict[str, Any]
    records: dict[str, history.Record] = field(default_factory=dict)

    @property
    def summaries(self) -> dict[str, dict[str, dict[str, float]]]:
        return {v: r.summary for v, r in self.records.items() if not r.skipped}

    @property
    def samples(self) -> dict[str, list[dict[str, Any]]]:
        return {v: r.samples for v, r in self.records.items() if not r.skipped}

    @property
    def load_avg(self) -> dict[str, Any] | None:
        return next((r.load_avg for r in self.records.values() if r.load_avg), None)

    @property
    def dirty(self) -> bool:
        return bool(self.commit and self.commit.endswith("+dirty"))

    def median(self, variant: str, metric: str) -> float | None:
        value = self.summaries.get(variant, {}).get(metric, {}).get("median")
        return float(value) if value is not None else None

    def view(self) -> gate.RunView:
        return gate.RunView(self.run_id, self.date, self.commit, self.env, self.bench, self.samples, self.load_avg)

    @property
    def not_gated(self) -> str | None:
        """Why the gate would not judge this run (too few rounds, a busy host), else None."""
        return gate.not_gated(self.view())

    @property
    def ratios(self) -> list[stats.RatioValue]:
        """The run's ratios against its baselines (BE-1), with their targets."""
        return stats.ratios(self.samples)


@dataclass
class Series:
    key: tuple
    runs: list[Run]

    @property
    def latest(self) -> Run:
        return self.runs[-1]

    @property
    def previous(self) -> Run | None:
        return self.runs[-2] if len(self.runs) > 1 else None

    @property
    def slug(self) -> str:
        """The series in a file name (its charts): letters, digits, `.`, `_` and `-` only, for a model named `hf:gpt2`
        or `package.module:factory` too (a `:` in a file name cannot be checked out on Windows); the digest of its
        key keeps two series apart."""
        bench = self.latest.bench
        digest = hashlib.sha1(repr(self.key).encode()).hexdigest()[:8]
        name = f"{bench.get('model')}-{bench.get('compiler')}-{'dyn' if bench.get('dynamic') else 'static'}-{digest}"
        return _UNSAFE.sub("-", name)

    @property
    def title(self) -> str:
        """The series in a few words, for headings and tables: model, implementation, SoC, CANN (or torch) and
        torch-npu; the rest of what identifies it is `description`."""
        return self.short

    @property
    def description(self) -> str:
        """Everything that identifies the series, once, under its heading."""
        env, bench = self.latest.env, self.latest.bench
        impl = f"{env.get('impl')} {env.get('impl_version') or ''}".strip()
        variant = f" · {env['variant']}" if env.get("variant") else ""
        return (f"{impl} · {bench.get('model')}.{bench.get('method')} · "
                f"{bench.get('mode')} · {'dynamic' if bench.get('dynamic') else 'static'} · graph compiler "
                f"{bench.get('compiler')} · {version_label(env)} · {env.get('device')} ({env.get('soc')}) · Python "
                f"{env.get('python')}{variant}")

    @property
    def short(self) -> str:
        """The series in a few words: model, implementation, SoC (family), CANN or torch, torch-npu, variant."""
        env = self.latest.env
        soc = legs_mod.soc_family(env.get("soc")) if env.get("cann") else env.get("soc")
        where = f"CANN {env['cann']}" if env.get("cann") else f"torch {env.get('torch')}"
        npu = f" · torch-npu {env['torch_npu']}" if env.get("torch_npu") else ""
        variant = f" · {env['variant']}" if env.get("variant") else ""
        return f"{self.latest.bench.get('model')} · {env.get('impl')} · {soc} · {where}{npu}{variant}"


def version_label(env: Mapping[str, Any]) -> str:
    parts = [f"torch {env.get('torch')}"]
    if env.get("torch_npu"):
        parts.append(f"torch_npu {env['torch_npu']}")
    parts.append(f"CANN {env['cann']}" if env.get("cann") else "no CANN")
    return " · ".join(parts)


def group(records: Iterable[history.Record]) -> list[Series]:
    """Records -> series (by key) -> runs (by run id), oldest first; series by model, implementation, version."""
    by_key: dict[tuple, dict[str, Run]] = {}
    for record in records:
        runs = by_key.setdefault(record.key(), {})
        run = runs.setdefault(record.run_id, Run(record.run_id, record.date, record.commit, record.env, record.bench))
        run.records[record.variant] = record
    series = [Series(key, sorted(runs.values(), key=lambda r: (r.date, r.run_id))) for key, runs in by_key.items()]
    series.sort(key=lambda s: (str(s.latest.bench.get("model")), str(s.latest.env.get("impl")),
                               str(s.latest.env.get("soc")), cann_mod.sort_key(s.latest.env.get("cann")),
                               gate.version_key(s.latest.env.get("torch_npu")), s.title))
    return series


@dataclass(frozen=True)
class Saving:
    """BE-1: what the cache saves on one series' latest run (time to first output, cold → warm), and how its
    figures moved since the series' previous run."""

    series: Series
    cold: float | None
    warm: float | None
    previous: Run | None

    @property
    def factor(self) -> float | None:
        return self.cold / self.warm if self.cold and self.warm else None

    def before(self, variant: str) -> float | None:
        return self.previous.median(variant, "ttfo_s") if self.previous else None


@dataclass(frozen=True)
class Regression:
    """One slowed figure of one series (fired or accepted): every check that saw it, the plain figure first."""

    series: Series
    label: str
    status: str  # "regression" | "accepted" | "suspected"
    checks: tuple[gate.Check, ...]

    @property
    def primary(self) -> gate.Check:
        return self.checks[0]


@dataclass
class Comparison:
    """Two CANN versions side by side: each comparison group's latest run on either, and the tests whose outcome
    differs between their results (matched by implementation and SoC)."""

    a: str
    b: str
    runs: list[tuple[str, Run | None, Run | None]] = field(default_factory=list)
    tests: list[changes_mod.TestChange] = field(default_factory=list)
    #: the legs (implementation and SoC) with results on both versions
    paired: list[str] = field(default_factory=list)


@dataclass
class Report:
    """The night as data: everything the renderer reads, and nothing it writes."""

    series: list[Series]
    checks: gate.GateResult
    verdict: verdict_mod.Verdict
    matrix: matrix_mod.Matrix
    history_files: list[str]
    rule: gate.Rule
    savings: list[Saving] = field(default_factory=list)
    regressions: list[Regression] = field(default_factory=list)
    changes: changes_mod.Changes = field(default_factory=changes_mod.Changes)
    comparison: Comparison | None = None
    #: benchmark (in words) -> (version set in words, its latest run), versions in order (`version_groups`)
    versions: dict[str, list[tuple[str, Run]]] = field(default_factory=dict)
    #: CANN over CANN: (comparison group, [(CANN version, its latest run)] in CANN order) where two or more ran
    cann_runs: list[tuple[tuple, list[tuple[str, Run]]]] = field(default_factory=list)

    @property
    def latest(self) -> Run | None:
        runs = [r for s in self.series for r in s.runs]
        return max(runs, key=lambda r: (r.date, r.run_id)) if runs else None

    def fired(self, series: Series) -> list[gate.Check]:
        """The gate's regressions on `series`."""
        return [c for c in self.checks.fired if c.series == series.key]

    def not_gated(self, series: Series) -> str | None:
        """Why `series` is shown but not gated (stale: not run in the latest night; or its latest run's reason)."""
        return self.checks.stale.get(series.key) or series.latest.not_gated

    @property
    def current_columns(self) -> list[matrix_mod.Column]:
        """The results columns that count tonight (a leg's results from an earlier night do not)."""
        return [c for c in self.matrix.columns if self.verdict.current(c)]

    @property
    def nothing_checked(self) -> bool:
        """No results from tonight and no gate check that compared anything: a verdict would say nothing."""
        return not self.current_columns and not self.checks.judged

    @property
    def performance_checked(self) -> bool:
        """Whether the gate compared any figure of tonight with a baseline."""
        return bool(self.checks.judged)


def build(records: list[history.Record], matrix: matrix_mod.Matrix, *, rule: gate.Rule | None = None,
          history_files: list[str], accepted: Iterable[gate.Accepted] = (), night: verdict_mod.Night | None = None,
          previous: Mapping[str, Mapping[str, str]] | None = None,
          compare: tuple[str, str] | None = None) -> Report:
    """BE-4: the report's data; `previous` maps a results column label to the previous night's test outcomes."""
    night = night or verdict_mod.Night()
    rule = rule or gate.Rule()
    series = group(records)
    runs = [r.view() for s in series for r in s.runs]
    since = verdict_mod.tonight_began(matrix, runs, night)
    checks = gate.evaluate({s.key: [r.view() for r in s.runs] for s in series}, rule=rule, accepted=accepted,
                           since=since, expected=night.expected)
    judged = verdict_mod.judge(matrix, checks, runs, night, since)
    # tonight's series first, then the stale ones
    series.sort(key=lambda s: s.key in checks.stale)
    report = Report(series, checks, judged, matrix, history_files, rule)
    report.savings = savings(series, checks)
    report.regressions = regressions(series, checks)
    absent = {c.label: _leg_label(c) for c in matrix.columns if c.label in judged.absent and _still_expected(c, night)}
    report.changes = changes_mod.changes(matrix, previous, absent, judged.missing)
    report.comparison = comparison(series, matrix, *compare) if compare else None
    report.versions = version_groups(series)
    report.cann_runs = [(key, sorted(versions.items(), key=lambda kv: cann_mod.sort_key(kv[0])))
                        for key, versions in latest_by_cann(series).items() if len(versions) >= 2]
    return report


def _leg_label(column: matrix_mod.Column) -> str:
    leg = legs_mod.of_results(column.implementation, column.versions)
    return leg.label if leg is not None else column.label


def _still_expected(column: matrix_mod.Column, night: verdict_mod.Night) -> bool:
    """Whether a column's leg is one the night expects (a retired or dropped leg's old results are no news)."""
    leg = legs_mod.of_results(column.implementation, column.versions)
    if leg is None:
        return True
    if night.expected is not None:
        return leg in night.expected
    return not any(r.covers(leg) for r in night.retired)


def savings(series: list[Series], checks: gate.GateResult) -> list[Saving]:
    """The saving of every series run in the latest night (stale series left out), with cold and warm TTFO."""
    out = []
    for s in series:
        if s.key in checks.stale:
            continue
        cold, warm = s.latest.median("impl-cold", "ttfo_s"), s.latest.median("impl-warm", "ttfo_s")
        if cold is not None or warm is not None:
            out.append(Saving(s, cold, warm, s.previous))
    return out


def regressions(series: list[Series], checks: gate.GateResult) -> list[Regression]:
    """Fired, suspected and accepted checks, one entry per series and figure, whatever number of baselines (its
    own history, the previous CANN) saw it; the strongest status first."""
    by_key = {s.key: s for s in series}
    groups: dict[tuple, list[gate.Check]] = {}
    for check in checks.checks:
        if check.status in ("regression", "accepted", "suspected"):
            groups.setdefault((check.series, check.figure.key), []).append(check)
    out = []
    order = ("regression", "suspected", "accepted")
    for (key, _), found in groups.items():
        found.sort(key=lambda c: (order.index(c.status), c.kind != "window"))
        out.append(Regression(by_key[key], found[0].figure.label, found[0].status, tuple(found)))
    out.sort(key=lambda r: (order.index(r.status), r.series.title, r.label))
    return out


def cann_versions(series: list[Series], matrix: matrix_mod.Matrix) -> list[str]:
    """Every CANN version with benchmarks or results, in version order."""
    found = {cann_mod.spelled(r.env["cann"]) for s in series for r in s.runs if r.env.get("cann")}
    found |= {cann_mod.spelled(c.versions["cann"]) for c in matrix.columns if c.versions.get("cann")}
    return sorted(found, key=cann_mod.sort_key)


def comparison(series: list[Series], matrix: matrix_mod.Matrix, a: str, b: str) -> Comparison:
    """`report --compare A B`; raises ValueError naming the known versions when A or B has nothing."""
    known = cann_versions(series, matrix)
    spelled = []
    for version in (a, b):
        found = [k for k in known if cann_mod.same(k, version)]
        if not found:
            raise ValueError(f"--compare: CANN {version!r} has no benchmarks or results here; known: "
                             f"{', '.join(known) or 'none (no NPU history)'}")
        spelled.append(found[0])
    a, b = spelled
    out = Comparison(a, b)
    for key, versions in latest_by_cann(series, (a, b)).items():
        out.runs.append((group_title(key), versions.get(a), versions.get(b)))
    out.runs.sort(key=lambda t: t[0])
    columns = {(c.implementation, c.versions.get("soc"), cann_mod.spelled(c.versions.get("cann"))): c
               for c in matrix.columns}
    for (impl, soc, cann), column in sorted(columns.items(), key=lambda kv: kv[1].label):
        if cann == a and (impl, soc, b) in columns:
            other = columns[(impl, soc, b)]
            label = f"{impl} · {soc}: CANN {a} → {b}"
            out.paired.append(label)
            out.tests += changes_mod.diff(label, changes_mod.outcomes(column), changes_mod.outcomes(other))
    return out


def latest_by_cann(series: list[Series], only: Iterable[str] | None = None) -> dict[tuple, dict[str, Run]]:
    """Per comparison group (`gate.comparison_group`), the latest run of each CANN version (of `only`, if given)."""
    wanted = None if only is None else list(only)
    latest: dict[tuple, dict[str, Run]] = {}
    for s in series:
        for run in s.runs:
            if not run.env.get("cann"):
                continue
            cann = cann_mod.spelled(run.env["cann"])
            if wanted is None or any(cann_mod.same(cann, w) for w in wanted):
                versions = latest.setdefault(gate.comparison_group(run.env, run.bench), {})
                if cann not in versions or (run.date, run.run_id) > (versions[cann].date, versions[cann].run_id):
                    versions[cann] = run
    return latest


def group_title(key: tuple) -> str:
    """A comparison group in words: implementation, benchmark, graph compiler, device and SoC."""
    fields = dict(key)
    return (f"{fields['impl']} · {fields['model']}.{fields['method']} · {fields['mode']} · {fields['compiler']}"
            f" · {fields['device']} ({fields['soc']})")


def version_groups(series: list[Series]) -> dict[str, list[tuple[str, Run]]]:
    """Benchmarks with their latest run per version set, versions in `packaging.version` order."""
    groups: dict[str, list[tuple[str, Run]]] = {}
    for s in series:
        env, bench = s.latest.env, s.latest.bench
        name = (f"{env.get('impl')} · {bench.get('model')}.{bench.get('method')} · {bench.get('mode')} · "
                f"{'dynamic' if bench.get('dynamic') else 'static'} · {bench.get('compiler')} · {env.get('device')} "
                f"({env.get('soc')})")
        label = f"{version_label(env)} · {env.get('impl')} {env.get('impl_version') or ''}".strip()
        groups.setdefault(name, []).append((label, s.latest))
    for columns in groups.values():
        columns.sort(key=lambda c: (cann_mod.sort_key(c[1].env.get("cann")),
                                    gate.version_key(c[1].env.get("torch_npu")),
                                    gate.version_key(c[1].env.get("torch")), c[0]))
    return groups
