"""`reports/index.html` and `reports/README.md` from the history and the suite's results (SPEC BE-4).

This module shapes the data (series, runs, the gate's checks, the verdict, the CANN-over-CANN deltas, the matrix)
into a plain context; the pages come from the jinja2 templates in `templates/` and the charts from `charts`.
Rendering happens in a staging folder and replaces the published files only once everything rendered, so a
failure leaves the published report as it was.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import jinja2

from conformance.report import cann as cann_mod, charts, gate, history, matrix as matrix_mod, stats
from conformance.report import verdict as verdict_mod

CHART_DIR = "charts"
#: the runs a trend chart and a runs table show (the full history is linked)
LAST_RUNS = 20
#: (column title, metric) of the per-variant table
PHASE_COLUMNS = (
    ("time to first output", "ttfo_s"),
    ("interpreter + imports", "startup_import_s"),
    ("model build", "build_s"),
    ("compile or load", "compile_or_load_s"),
    ("first call", "first_call_s"),
    ("steady call", "steady_s"),
)
VARIANT_HEADER = [title for title, _ in PHASE_COLUMNS] + ["artifact", "traced", "compile/load measured", "runs"]
VARIANT_LABELS = {v: label for v, label, _ in charts.VARIANTS} | {"inductor-prime": "torch.compile priming run"}
#: the figures of the CANN-over-CANN table: (label, variant, metric)
CANN_FIGURES = (
    ("warm load", "impl-warm", "compile_or_load_s"),
    ("warm time to first output", "impl-warm", "ttfo_s"),
    ("cold compile", "impl-cold", "compile_or_load_s"),
    ("cold time to first output", "impl-cold", "ttfo_s"),
    ("warm steady call", "impl-warm", "steady_s"),
    ("eager time to first output (baseline)", "eager", "ttfo_s"),
)
_TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("conformance.report", "templates"),
    autoescape=lambda name: bool(name and name.endswith(".html.j2")),
    trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
)




def md_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table (pipes escaped, newlines flattened)."""
    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


_TEMPLATES.globals.update(
    md=md_table,
    gate_rows=lambda rows: [[r["series"], r["figure"], r["kind"], r["value"], r["baseline"], r["factor"], r["p"],
                             r["status"] + (f": {r['reason']}" if r["reason"] else "")] for r in rows],
    cann_rows=lambda rows: [[r["figure"]] + [c["value"] + (f" ({c['delta']})" if c["delta"] else "")
                                             for c in r["cells"]] for r in rows],
    matrix_rows=lambda rows: [[r["clause"]] + [
        (c["status"] if c["status"] != "none" else "–") + (f" ({c['counts']})" if c["counts"] else "")
        + "".join(f"; {t['test']} ({t['outcome']})" for t in c["failing"]) for c in r["cells"]] for r in rows],
    summary_rows=lambda rows: [[r["title"], r["date"] + (" (dirty)" if r["dirty"] else ""), r["warm"], r["load"],
                                r["cold"], r["warm_cold"], r["warm_eager"], r["gate"]] for r in rows],
    variant_rows=lambda rows: [[label] + cells for label, cells in rows],
)


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

    def view(self) -> gate.RunView:
        return gate.RunView(self.run_id, self.date, self.commit, self.env, self.bench, self.samples, self.load_avg)


@dataclass
class Series:
    key: tuple
    runs: list[Run]

    @property
    def latest(self) -> Run:
        return self.runs[-1]

    @property
    def slug(self) -> str:
        bench = self.latest.bench
        digest = hashlib.sha1(repr(self.key).encode()).hexdigest()[:8]
        return f"{bench.get('model')}-{bench.get('compiler')}-{'dyn' if bench.get('dynamic') else 'static'}-{digest}"

    @property
    def title(self) -> str:
        env, bench = self.latest.env, self.latest.bench
        impl = f"{env.get('impl')} {env.get('impl_version') or ''}".strip()
        return (f"{impl} · {bench.get('model')}.{bench.get('method')} · "
                f"{bench.get('mode')} · {'dynamic' if bench.get('dynamic') else 'static'} · graph compiler "
                f"{bench.get('compiler')} · {version_label(env)} · {env.get('device')} ({env.get('soc')})")


def version_label(env: dict[str, Any]) -> str:
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


@dataclass
class Report:
    series: list[Series]
    checks: gate.GateResult
    verdict: verdict_mod.Verdict
    matrix: matrix_mod.Matrix
    history_files: list[str]
    threshold: float
    alpha: float
    #: where a test's source is linked from (its path is appended)
    source_url: str = "../"
    #: where the history files are linked from, relative to the pages
    history_url: str = "history/"
    #: (series slug or version group, kind) -> chart path relative to the pages
    charts: dict[tuple[str, str], str] = field(default_factory=dict)


def build(records: list[history.Record], matrix: matrix_mod.Matrix, *, threshold: float, alpha: float,
          history_files: list[str], accepted: Iterable[gate.Accepted] = (), night: verdict_mod.Night | None = None,
          source_url: str = "../", history_url: str = "history/") -> Report:
    series = group(records)
    checks = gate.evaluate({s.key: [r.view() for r in s.runs] for s in series}, threshold=threshold, alpha=alpha,
                           accepted=accepted)
    runs = [r.view() for s in series for r in s.runs]
    judged = verdict_mod.judge(matrix, checks, runs, night or verdict_mod.Night())
    return Report(series, checks, judged, matrix, history_files, threshold, alpha, source_url, history_url)


def write(report: Report, out_dir: str | os.PathLike) -> list[Path]:
    """Render charts, `index.html` and `README.md` in a staging folder, then replace the published ones."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".report-", dir=out))
    try:
        _render_charts(report, staging / CHART_DIR)
        context = _context(report)
        (staging / "index.html").write_text(_TEMPLATES.get_template("index.html.j2").render(context),
                                            encoding="utf-8")
        (staging / "README.md").write_text(_TEMPLATES.get_template("README.md.j2").render(context),
                                           encoding="utf-8")
        chart_dir = out / CHART_DIR
        chart_dir.mkdir(exist_ok=True)
        for stale in chart_dir.glob("*.png"):
            stale.unlink()
        written = []
        for chart in sorted((staging / CHART_DIR).glob("*.png")):
            written.append(Path(shutil.move(str(chart), str(chart_dir / chart.name))))
        for page in ("index.html", "README.md"):
            written.append(Path(shutil.move(str(staging / page), str(out / page))))
        return written
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _render_charts(report: Report, chart_dir: Path) -> None:
    chart_dir.mkdir(parents=True, exist_ok=True)
    fired = {(c.series, c.run.run_id, c.figure.variant, c.figure.metric) for c in report.checks.fired
             if c.figure.den_variant is None}
    for series in report.series:
        run = series.latest
        if any(s.get("ttfo_s") for s in run.summaries.values()):
            name = f"{series.slug}-latest.png"
            charts.startup(run.summaries, f"{series.title}\nrun {run.date}, {run.bench.get('rounds')} rounds",
                           str(chart_dir / name))
            report.charts[(series.slug, "latest")] = f"{CHART_DIR}/{name}"
        if len(series.runs) > 1:
            name = f"{series.slug}-trend.png"
            shown = series.runs[-LAST_RUNS:]
            runs = [{"date": r.date, "commit": r.commit, "summaries": r.summaries,
                     "regressed": {(v, m) for key, rid, v, m in fired if key == series.key and rid == r.run_id}}
                    for r in shown]
            charts.trend(runs, f"trend, last {len(shown)} of {len(series.runs)} runs: {series.title}",
                         str(chart_dir / name))
            report.charts[(series.slug, "trend")] = f"{CHART_DIR}/{name}"
    for name, columns in version_groups(report.series).items():
        if len(columns) > 1:
            slug = hashlib.sha1(name.encode()).hexdigest()[:8]
            file = f"versions-{slug}.png"
            charts.versions([(label, run.summaries) for label, run in columns], f"versions side by side: {name}",
                            str(chart_dir / file))
            report.charts[(name, "versions")] = f"{CHART_DIR}/{file}"


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


# -- formatting -------------------------------------------------------------------------------------------------


def seconds(value: float | None) -> str:
    if value is None:
        return "–"
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.1f} ms"
    return f"{value * 1e6:.1f} µs"


def spread(summary: dict[str, float] | None) -> str:
    """`median [min–max]`."""
    if not summary:
        return "–"
    return f"{seconds(summary['median'])} [{seconds(summary['min'])}–{seconds(summary['max'])}]"


def nbytes(summary: dict[str, float] | None) -> str:
    if not summary or summary.get("median") is None:
        return "–"
    value = summary["median"]
    for unit in ("B", "KiB", "MiB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def ratio_text(value: stats.RatioValue) -> tuple[str, str, str]:
    """(value with its paired range, target, verdict)."""
    text = f"{value.value:.3g}" if value.value is not None else "–"
    if value.low is not None:
        text += f" [{value.low:.3g}–{value.high:.3g}]"
    target = f"≤ {value.ratio.target:.3g}" if value.ratio.target is not None else ""
    verdict = {True: "met", False: "missed", None: ""}[value.meets]
    return text, target, verdict


def figure_value(check: gate.Check, value: float) -> str:
    return f"{value:.3g}" if check.figure.den_variant else seconds(value)


def variant_rows(run: Run) -> list[tuple[str, list[str]]]:
    rows = []
    for variant, label, _ in charts.VARIANTS:
        record = run.records.get(variant)
        if record is None:
            continue
        if record.skipped:
            rows.append((label, [f"skipped: {record.skipped}"]))
            continue
        summary = record.summary
        traced = summary.get("traced_runs")
        how = sorted({s.get("compile_or_load_how") for s in record.samples if s.get("compile_or_load_how")})
        rows.append((label, [spread(summary.get(m)) for _, m in PHASE_COLUMNS] + [
            nbytes(summary.get("artifact_bytes")),
            f"{int(traced['median'])}/{traced['n']}" if traced else "–",
            ", ".join(how) or "–",
            str(len(record.samples)),
        ]))
    return rows


def _ratio_rows(run: Run) -> list[list[str]]:
    rows = [[v.ratio.name, *ratio_text(v)] for v in stats.ratios(run.samples)]
    over = run.samples.get("overhead")
    if over:
        s = over[-1]
        rows.append([f"per-call overhead ({s['compiler']} graph): cached {seconds(s['cached_call_s'])} vs graph "
                     f"called directly {seconds(s['direct_call_s'])}", seconds(s["overhead_s"]),
                     f"≤ {seconds(stats.OVERHEAD_TARGET_S)}",
                     "met" if s["overhead_s"] <= stats.OVERHEAD_TARGET_S else "missed"])
    return rows


def _machine(run: Run) -> list[tuple[str, str]]:
    """What the runner told about its machine (`env.machine`: npu-smi, driver, firmware), as label/value pairs."""
    machine = run.env.get("machine") or {}
    return [(k, str(v)) for k, v in machine.items() if v]


def _run_note(run: Run) -> str:
    env, load = run.env, run.load_avg
    load_text = ""
    if load:
        cpus = f" on {load['cpus']} CPUs" if load.get("cpus") else ""
        load_text = f", host load average (1/5/15 min) {load.get('start')} at the start and {load.get('end')} at " \
                    f"the end{cpus}"
    return (f"Latest run {run.date}, commit {run.commit or 'unknown'}, host {env.get('host')}, Python "
            f"{env.get('python')}, {env.get('threads')} CPU thread(s), {run.bench.get('rounds')} rounds, ge_cache "
            f"{run.bench.get('ge_cache')}{load_text}.")


def _series_context(report: Report, series: Series) -> dict[str, Any]:
    run = series.latest
    view = run.view()
    stale = report.checks.stale.get(series.key)
    fired = [c for c in report.checks.fired if c.series == series.key]
    shown = list(reversed(series.runs[-LAST_RUNS:]))
    run_rows = []
    for r in shown:
        v = r.view()
        run_rows.append({
            "date": r.date, "commit": (r.commit or "")[:12], "dirty": r.dirty, "host": r.env.get("host"),
            "rounds": v.rounds, "warm": spread(r.summaries.get("impl-warm", {}).get("ttfo_s")),
            "load": spread(r.summaries.get("impl-warm", {}).get("compile_or_load_s")),
            "cold": spread(r.summaries.get("impl-cold", {}).get("ttfo_s")),
            "gated": gate.not_gated(v) or "yes",
            "regressions": ", ".join(f"{c.figure.label} ×{c.factor:.2f}" for c in fired if c.run.run_id == r.run_id)
                           or "–",
        })
    return {
        "slug": series.slug, "title": series.title, "note": _run_note(run), "dirty": run.dirty,
        "machine": _machine(run), "chart": report.charts.get((series.slug, "latest")),
        "trend": report.charts.get((series.slug, "trend")), "runs_total": len(series.runs),
        "variants": variant_rows(run), "ratios": _ratio_rows(run), "runs": run_rows,
        "history_file": history.file_name(run.env), "gated": stale or gate.not_gated(view) or "",
        "status": "regressed" if fired else ("not gated" if stale or gate.not_gated(view) else "ok"),
    }


def _summary_rows(report: Report) -> list[dict[str, Any]]:
    rows = []
    for s in report.series:
        run = s.latest
        values = {v.ratio.name: v for v in stats.ratios(run.samples)}

        def r(name: str) -> str:
            value = values.get(name)
            if value is None or value.value is None:
                return "–"
            verdict = ratio_text(value)[2]
            return f"{value.value:.3g}" + (f" ({verdict})" if verdict else "")

        fired = [c for c in report.checks.fired if c.series == s.key]
        stale = report.checks.stale.get(s.key)
        rows.append({
            "slug": s.slug, "title": s.title, "date": run.date, "dirty": run.dirty,
            "warm": spread(run.summaries.get("impl-warm", {}).get("ttfo_s")),
            "load": spread(run.summaries.get("impl-warm", {}).get("compile_or_load_s")),
            "cold": spread(run.summaries.get("impl-cold", {}).get("ttfo_s")),
            "warm_cold": r("warm / cold compile-or-load"), "warm_eager": r("warm TTFO / eager TTFO"),
            "gate": f"{len(fired)} regression(s)" if fired else (
                "not gated: " + (stale or gate.not_gated(run.view()) or "") if stale or gate.not_gated(run.view())
                else "ok"),
            "gate_class": "regressed" if fired else ("skip" if stale or gate.not_gated(run.view()) else "met"),
        })
    return rows


def _check_rows(report: Report) -> list[dict[str, Any]]:
    titles = {s.key: s.title for s in report.series}
    rows = []
    order = {"regression": 0, "accepted": 1, "not gated": 2, "ok": 3}
    for c in sorted(report.checks.checks, key=lambda c: (order[c.status], titles.get(c.series, ""), c.kind)):
        rows.append({
            "series": titles.get(c.series, "?"), "figure": c.figure.label,
            "kind": "earlier runs" if c.kind == "window" else "CANN over CANN", "value": figure_value(c, c.value),
            "baseline": f"{figure_value(c, c.baseline)} ({c.baseline_label})", "factor": f"×{c.factor:.2f}",
            "p": f"{c.p_value:.2g}", "status": c.status, "reason": c.reason,
            "cls": {"regression": "regressed", "accepted": "xfail", "not gated": "skip", "ok": "met"}[c.status],
            # shown in the main table: what fired or was accepted, and what would have been slower if gated
            "notable": c.status in ("regression", "accepted") or (
                c.status == "not gated" and c.factor > report.threshold),
        })
    return rows


def cann_tables(series: list[Series]) -> list[dict[str, Any]]:
    """CANN over CANN: per SoC, model and implementation, each CANN version's latest run beside the previous one,
    with the change of every figure's median."""
    groups: dict[tuple, dict[str, Run]] = {}
    for s in series:
        for run in s.runs:
            if not run.env.get("cann"):
                continue
            versions = groups.setdefault(gate.comparison_group(run.env, run.bench), {})
            cann = str(run.env["cann"])
            if cann not in versions or (run.date, run.run_id) > (versions[cann].date, versions[cann].run_id):
                versions[cann] = run
    tables = []
    for key, versions in groups.items():
        if len(versions) < 2:
            continue
        ordered = sorted(versions.items(), key=lambda kv: cann_mod.sort_key(kv[0]))
        rows = []
        for label, variant, metric in CANN_FIGURES:
            cells, previous = [], None
            for _, run in ordered:
                value = run.summaries.get(variant, {}).get(metric, {}).get("median")
                delta, cls = "", ""
                if value is not None and previous:
                    change = value / previous - 1
                    delta = f"{change:+.1%}"
                    cls = "regressed" if change > 0.10 else ("met" if change < -0.10 else "")
                cells.append({"value": seconds(value), "delta": delta, "cls": cls})
                previous = value if value else previous
            if any(c["value"] != "–" for c in cells):
                rows.append({"figure": label, "cells": cells})
        fields = dict(key)
        tables.append({
            "title": f"{fields['impl']} · {fields['model']}.{fields['method']} · {fields['mode']} · "
                     f"{fields['compiler']} · {fields['device']} ({fields['soc']})",
            "versions": [f"CANN {cann}" for cann, _ in ordered],
            "runs": [f"{run.date} · torch_npu {run.env.get('torch_npu')}" for _, run in ordered],
            "rows": rows,
        })
    return tables


def _matrix_context(report: Report) -> dict[str, Any]:
    m = report.matrix
    columns = []
    for column in m.columns:
        counts = column.counts
        columns.append({
            "label": column.label, "source": column.source, "finished": column.finished_iso or "time unknown",
            "counts": [(o, counts[o]) for o in sorted(counts, key=matrix_mod.outcome_order)],
            "total": sum(counts.values()), "stale": report.verdict.stale.get(column.label),
            "green": not column.bad,
        })
    rows = []
    for clause in m.clauses:
        cells = []
        for column in m.columns:
            tests = m.cells.get((clause, column.label), [])
            counts = m.cell_counts(clause, column.label)
            failing = [t for t in tests if t.outcome in matrix_mod.BAD_OUTCOMES]
            cells.append({
                "status": m.status(clause, column.label) or "none",
                "counts": " · ".join(f"{n} {o}" for o, n in sorted(counts.items(),
                                                                     key=lambda kv: matrix_mod.outcome_order(kv[0]))),
                "failing": [{"test": t.test, "outcome": "fixed upstream (xpassed)" if t.outcome == "xpassed"
                             else t.outcome, "message": (t.message or "").strip()[-600:],
                             "href": report.source_url + t.source} for t in failing],
            })
        rows.append({"clause": clause, "cells": cells})
    return {"columns": columns, "rows": rows}


def _context(report: Report) -> dict[str, Any]:
    runs = [r for s in report.series for r in s.runs]
    latest = max(runs, key=lambda r: (r.date, r.run_id)) if runs else None
    return {
        "verdict": report.verdict, "threshold": report.threshold, "alpha": report.alpha,
        "min_rounds": gate.MIN_ROUNDS, "window": gate.WINDOW, "last_runs": LAST_RUNS,
        "latest_date": latest.date if latest else "–",
        "latest_commit": (latest.commit or "unknown") if latest else "–",
        "latest_dirty": bool(latest and latest.dirty),
        "run_count": len(runs), "history_files": report.history_files, "history_url": report.history_url,
        "checks_total": len(report.checks.checks), "fired": len(report.checks.fired),
        "not_gated": sum(1 for c in report.checks.checks if c.status == "not gated"),
        "accepted": sum(1 for c in report.checks.checks if c.status == "accepted"),
        "summary": _summary_rows(report), "series": [_series_context(report, s) for s in report.series],
        "checks": _check_rows(report), "stale_series": [f"{s.title} (last run {s.latest.date})" for s in report.series
                         if s.key in report.checks.stale],
        "cann_tables": cann_tables(report.series),
        "versions": [{"name": name, "chart": report.charts.get((name, "versions")),
                      "header": [label for label, _ in columns], "rows": _versions_rows(columns)}
                     for name, columns in version_groups(report.series).items()],
        "matrix": _matrix_context(report), "variant_header": VARIANT_HEADER, "notes": NOTES,
    }


def _versions_rows(columns: list[tuple[str, Run]]) -> list[list[str]]:
    rows = []
    for variant in ("impl-warm", "impl-cold", "eager", "aot-load"):
        for metric in ("ttfo_s", "compile_or_load_s"):
            if any(run.summaries.get(variant, {}).get(metric) for _, run in columns):
                rows.append([f"{VARIANT_LABELS.get(variant, variant)}: {metric[:-2].replace('_', ' ')}"] + [
                    spread(run.summaries.get(variant, {}).get(metric)) for _, run in columns])
    for name in ("warm / cold compile-or-load", "warm TTFO / eager TTFO", "warm TTFO / aot_compile load TTFO"):
        cells = []
        for _, run in columns:
            found = [v for v in stats.ratios(run.samples) if v.ratio.name == name]
            cells.append(ratio_text(found[0])[0] if found else "–")
        rows.append([name] + cells)
    rows.append(["run"] + [f"{run.date} ({(run.commit or '')[:7]})" for _, run in columns])
    return rows


NOTES = [
    "Cold start: a fresh process with an empty cache folder (and an empty Inductor cache). Warm start: a fresh "
    "process with the folder a cold run left (and an empty Inductor cache, so nothing else carries over). N rounds "
    "each, interleaved with the baselines; medians with [min–max] (SPEC BE-1).",
    "Phases (BE-2), measured inside the worker with time.perf_counter, from the parent's spawn time: interpreter + "
    "imports (import torch, torch_npu, the implementation), model build (and wrapping the method), compile or load, "
    "first call, steady-state call. Compile or load is measured from the implementation's 'loaded from' log record "
    "on a warm start, as an explicit call for aot_compile, and otherwise as the first call's time beyond the second "
    "call's.",
    "Baselines, measured in the same run: eager (no compile); torch.compile with Inductor on Inductor caches a "
    "priming run made hot; PyTorch's aot_compile + save (once) and torch.compiler.load_compiled_function (with the "
    "Inductor cache its save left). 'traced' counts runs that imported Dynamo or Inductor or counted a Dynamo graph.",
    "The gate looks at the implementation's own figures and in-run ratios, never at a baseline's own figure (which "
    "moves with the host). Each series' latest run is compared with its earlier runs and, on an NPU, with the latest "
    "run of the previous CANN version on the same SoC, model and implementation, using the raw per-round samples "
    "and a one-sided Mann-Whitney U test (scipy). Runs with too few rounds or on a busy host, series not run in the "
    "latest night, and changes accepted in reports/accepted-changes.json are shown, not gated.",
    "Per-call overhead: the warm cached callable against the same graph compiled by the same graph compiler and "
    "called directly (Inductor's generated call, or the ATen graph), on tiny, where overhead dominates.",
    "Targets for the reference (gpt-small with Inductor; overhead on tiny): warm TTFO ≤ 1.15× eager's; warm compile "
    "or load ≤ 1/30 of cold; warm TTFO ≤ 0.6× aot_compile load's; per-call overhead ≤ 3 µs.",
]
