"""The pages' context: the report's data (`model`) shaped into plain rows and strings for the templates (BE-4).

Part of the renderer: it reads the model and changes nothing in it; what only the pages know (the charts drawn,
where links point) comes in beside the model.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from torchair_conformance.report import cann as cann_mod
from torchair_conformance.report import changes as changes_mod
from torchair_conformance.report import charts, gate, history, model, outputs, stats
from torchair_conformance.report import legs as legs_mod
from torchair_conformance.report import matrix as matrix_mod
from torchair_conformance.report.divergences import divergence_rows
from torchair_conformance.report.units import change, nbytes, seconds, spread

#: the runs a trend chart and a runs table show (the full history is linked)
LAST_RUNS = 20
#: (column title, metric) of the per-variant table, the figures the gate looks at first
PHASE_COLUMNS = (
    ("time to first output", "ttfo_s"),
    ("compile or load", "compile_or_load_s"),
    ("steady call", "steady_s"),
    ("interpreter + imports", "startup_import_s"),
    ("model build", "build_s"),
    ("first call", "first_call_s"),
)
#: `traced` (CC-14's evidence: did a warm start trace?) right after the variant, where no screen can hide it
VARIANT_HEADER = ["traced"] + [title for title, _ in PHASE_COLUMNS] + ["artifact", "compile/load measured", "runs"]
VARIANT_LABELS = {v: label for v, label, _ in charts.VARIANTS} | {"inductor-prime": "torch.compile priming run"}
#: the figures of the CANN-over-CANN and compare tables: (label, variant, metric)
CANN_FIGURES = (
    ("warm load", "impl-warm", "compile_or_load_s"),
    ("warm time to first output", "impl-warm", "ttfo_s"),
    ("cold compile", "impl-cold", "compile_or_load_s"),
    ("cold time to first output", "impl-cold", "ttfo_s"),
    ("warm steady call", "impl-warm", "steady_s"),
    ("eager time to first output (baseline)", "eager", "ttfo_s"),
)
#: (series slug or version group, kind) -> a chart's path relative to the pages (`render` draws them)
Charts = Mapping[tuple[str, str], str]


@dataclass(frozen=True)
class Links:
    """Where the pages link to, relative to themselves."""

    #: prefix of a failing test's source (its path relative to the repository is appended)
    source: str = "../"
    #: the folder of the full history files
    history: str = "history/"


#: the CANN releases, besides tonight's, whose older results stay in the matrix; older ones fold into an archive
MATRIX_RELEASES = 3
_CLS = {"regression": "regressed", "accepted": "xfail", "suspected": "xfail", "not gated": "skip", "ok": "met",
        "new failure": "regressed", "fixed": "met", "new skip": "skip", "no longer skipped": "met"}


def ratio_text(value: stats.RatioValue) -> tuple[str, str, str]:
    """(value with its paired range, target, verdict)."""
    text = f"{value.value:.3g}" if value.value is not None else "–"
    if value.low is not None:
        text += f" [{value.low:.3g}–{value.high:.3g}]"
    target = f"≤ {value.ratio.target:.3g}" if value.ratio.target is not None else ""
    verdict = {True: "met", False: "missed", None: ""}[value.meets]
    return text, target, verdict


def _cell(variant: str, metric: str, summary: dict[str, float] | None) -> dict[str, str]:
    """A phase cell: the median, its [min–max] beneath; `–` for what a variant does not do (eager compiles
    nothing)."""
    if not summary or (variant == "eager" and metric == "compile_or_load_s"):
        return {"main": "–", "range": "", "text": "–"}
    return {"main": seconds(summary["median"]), "range": f"{seconds(summary['min'])}–{seconds(summary['max'])}",
            "text": spread(summary)}


def variant_rows(run: model.Run) -> list[dict[str, Any]]:
    rows = []
    for variant, label, _ in charts.VARIANTS:
        record = run.records.get(variant)
        if record is None:
            continue
        if record.skipped:
            rows.append({"label": label, "skipped": f"skipped: {record.skipped}", "cells": []})
            continue
        summary = record.summary
        traced = summary.get("traced_runs")
        how = sorted({s.get("compile_or_load_how") for s in record.samples if s.get("compile_or_load_how")})
        plain = [{"main": text, "range": "", "text": text} for text in (
            nbytes(summary.get("artifact_bytes")), ", ".join(how) or "–", str(len(record.samples)))]
        traced_text = f"{int(traced['median'])}/{traced['n']}" if traced else "–"
        cells = ([{"main": traced_text, "range": "", "text": traced_text}]
                 + [_cell(variant, m, summary.get(m)) for _, m in PHASE_COLUMNS] + plain)
        rows.append({"label": label, "skipped": "", "cells": cells,
                     "traced": bool(traced and traced["median"] and variant == "impl-warm")})
    return rows


def _ratio_rows(run: model.Run) -> list[list[str]]:
    rows = [[v.ratio.name, *ratio_text(v)] for v in run.ratios]
    over = run.samples.get("overhead")
    if over:
        s = over[-1]
        rows.append([f"per-call overhead ({s['compiler']} graph): cached {seconds(s['cached_call_s'])} vs graph "
                     f"called directly {seconds(s['direct_call_s'])}", seconds(s["overhead_s"]),
                     f"≤ {seconds(stats.OVERHEAD_TARGET_S)}",
                     "met" if s["overhead_s"] <= stats.OVERHEAD_TARGET_S else "missed"])
    return rows


def _run_note(run: model.Run) -> str:
    env, load = run.env, run.load_avg
    load_text = ""
    if load:
        cpus = f" on {load['cpus']} CPUs" if load.get("cpus") else ""
        load_text = f", host load average (1/5/15 min) {load.get('start')} at the start and {load.get('end')} at " \
                    f"the end{cpus}"
    return (f"Latest run {run.date}, commit {run.commit or 'unknown'}, host {env.get('host')}, Python "
            f"{env.get('python')}, {env.get('threads')} CPU thread(s), {run.bench.get('rounds')} rounds, ge_cache "
            f"{run.bench.get('ge_cache')}{load_text}.")


def _series_context(report: model.Report, series: model.Series, drawn: Charts) -> dict[str, Any]:
    run = series.latest
    fired = report.fired(series)
    run_rows = []
    for r in reversed(series.runs[-LAST_RUNS:]):
        run_rows.append({
            "date": r.date, "commit": (r.commit or "")[:12], "dirty": r.dirty, "host": r.env.get("host"),
            "rounds": r.view().rounds, "warm": seconds(r.median("impl-warm", "ttfo_s")),
            "load": seconds(r.median("impl-warm", "compile_or_load_s")),
            "cold": seconds(r.median("impl-cold", "ttfo_s")), "gated": r.not_gated or "yes",
            "regressions": ", ".join(f"{c.figure.label} ×{c.factor:.2f}" for c in fired if c.run.run_id == r.run_id)
                           or "–",
        })
    machine = run.env.get("machine") or {}
    return {
        "slug": series.slug, "title": series.title, "description": series.description, "note": _run_note(run),
        "dirty": run.dirty, "stale": report.checks.stale.get(series.key),
        "machine": [(k, str(v)) for k, v in machine.items() if v],
        "chart": drawn.get((series.slug, "latest")),
        "chart_narrow": drawn.get((series.slug, "latest-narrow")),
        "trend": drawn.get((series.slug, "trend")),
        "trend_narrow": drawn.get((series.slug, "trend-narrow")),
        "runs_total": len(series.runs), "variants": variant_rows(run), "ratios": _ratio_rows(run), "runs": run_rows,
        "history_file": history.file_name(run.env), "gated": report.not_gated(series) or "",
    }


def _summary_rows(report: model.Report) -> list[dict[str, Any]]:
    rows = []
    for s in report.series:
        run = s.latest
        values = {v.ratio.name: v for v in run.ratios}

        def r(name: str, values: dict = values) -> str:
            value = values.get(name)
            if value is None or value.value is None:
                return "–"
            verdict = ratio_text(value)[2]
            return f"{value.value:.3g}" + (f" ({verdict})" if verdict else "")

        fired = report.fired(s)
        skip = report.not_gated(s) or report.checks.unchecked.get(s.key)
        suspected = [c for c in report.checks.checks if c.series == s.key and c.status == "suspected"]
        rows.append({
            "slug": s.slug, "title": s.title, "short": s.short, "date": run.date, "dirty": run.dirty,
            "stale": s.key in report.checks.stale,
            "warm": seconds(run.median("impl-warm", "ttfo_s")),
            "load": seconds(run.median("impl-warm", "compile_or_load_s")),
            "cold": seconds(run.median("impl-cold", "ttfo_s")),
            "warm_cold": r("warm / cold compile-or-load"), "warm_eager": r("warm TTFO / eager TTFO"),
            "gate": (f"{len(fired)} regression(s)" if fired else f"{len(suspected)} suspected" if suspected
                     else f"not checked: {skip}" if skip else "ok"),
            "gate_class": "regressed" if fired else ("xfail" if suspected else "skip" if skip else "met"),
        })
    return rows


def _check_rows(report: model.Report) -> list[dict[str, Any]]:
    """Every check that did not fire or get accepted (those are the regressions), for the folded table."""
    titles = {s.key: s.title for s in report.series}
    rows = []
    for c in sorted(report.checks.checks, key=lambda c: (c.status, titles.get(c.series, ""), c.kind)):
        if c.status in ("regression", "accepted", "suspected"):
            continue
        rows.append({"series": titles.get(c.series, "?"), "figure": c.figure.label,
                     "kind": "earlier nights" if c.kind == "window" else "CANN over CANN", "value": f"{c.value:.3g}",
                     "baseline": f"{c.baseline:.3g} ({c.baseline_label})", "factor": f"×{c.factor:.2f}",
                     "p": f"±{c.noise:.1%} / +{c.limit:.0%}", "status": c.status, "reason": c.reason,
                     "cls": _CLS[c.status]})
    return rows


def _regressions(report: model.Report) -> list[dict[str, Any]]:
    rows = []
    for r in report.regressions:
        first = r.primary
        moved = f"{first.baseline:.3g} → {first.value:.3g} (×{first.factor:.2f}, limit +{first.limit:.0%})"
        rows.append({"series": r.series.short, "title": r.series.title, "slug": r.series.slug, "figure": r.label,
                     "status": r.status, "cls": _CLS[r.status], "moved": moved,
                     "reason": next((c.reason for c in r.checks if c.status == "accepted"), ""),
                     "checks": [outputs.check_text(c) for c in r.checks]})
    return rows


def _test_rows(found: list[changes_mod.TestChange], links: Links) -> list[dict[str, Any]]:
    return [{"leg": c.column, "kind": c.kind, "cls": _CLS.get(c.kind, ""), "test": c.test,
             "href": links.source + c.test.split("::", 1)[0], "before": c.before or "absent",
             "now": c.now or "absent"} for c in found]


def _by_leg(rows: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Test changes grouped by leg (a leg's label is long: it is written once, above its tests)."""
    legs: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        legs.setdefault(row["leg"], []).append(row)
    return list(legs.items())


def _banner(report: model.Report) -> dict[str, Any]:
    verdict = report.verdict
    kinds: dict[str, int] = {}
    for c in report.changes.tests:
        kinds[c.kind] = kinds.get(c.kind, 0) + 1
    grey = verdict.green and (report.nothing_checked or not report.performance_checked)
    return {
        "cls": "none" if grey else ("green" if verdict.green else "red"),
        "head": outputs.headline(report), "checked": outputs.checked(report),
        "performance": outputs.performance_text(report),
        "savings": [{"series": s.series.short, "slug": s.series.slug, "saving": outputs.saving_text(s),
                     "since": outputs.since_text(s)} for s in report.savings],
        # the gate's problems are the regressions, listed once each below the banner
        "problems": [p for p in verdict.problems if not p.startswith("gate: ")],
        "regressions": sum(r.status == "regression" for r in report.regressions),
        "suspected": sum(r.status == "suspected" for r in report.regressions), "changes": sorted(kinds.items()),
        "missing_legs": report.changes.missing_legs,
    }


def column_order(report: model.Report) -> tuple[list[matrix_mod.Column], list[matrix_mod.Column]]:
    """The matrix's columns: tonight's legs (in CANN order), the other results of tonight (CPU), then the legs that
    did not run tonight from the last `MATRIX_RELEASES` CANN releases, in CANN order; and the older ones, for the
    archive."""
    def key(column: matrix_mod.Column) -> tuple:
        v = column.versions
        return (cann_mod.sort_key(v.get("cann")), str(v.get("soc")), str(v.get("variant")), column.label)

    current = [c for c in report.matrix.columns if report.verdict.current(c)]
    legs = sorted((c for c in current if c.versions.get("cann")), key=key)
    others = sorted((c for c in current if not c.versions.get("cann")), key=lambda c: c.label)
    old = sorted((c for c in report.matrix.columns if not report.verdict.current(c)), key=key)
    releases = sorted({cann_mod.release(str(c.versions["cann"])) if cann_mod.sort_key(c.versions.get("cann"))[0] == 1
                       else str(c.versions.get("cann")) for c in old}, key=cann_mod.sort_key)[-MATRIX_RELEASES:]
    recent = [c for c in old if (cann_mod.release(str(c.versions["cann"])) if cann_mod.sort_key(
        c.versions.get("cann"))[0] == 1 else str(c.versions.get("cann"))) in releases]
    return legs + others + recent, [c for c in old if c not in recent]


def column_head(column: matrix_mod.Column) -> str:
    """A column's heading in a few words: the leg (SoC, CANN, torch-npu, variant) or, off-NPU, the label without
    its note; the full label is the heading's title."""
    leg = legs_mod.of_results(column.implementation, column.versions)
    if leg is not None:
        return f"{column.implementation} · {leg.label.rsplit(' (', 1)[0]}"
    return column.label.split(" (", 1)[0]


def _matrix_context(report: model.Report, links: Links) -> dict[str, Any]:
    """Clause rows with a failing test first, each on its own; the other rows folded by their cells' statuses.
    Tonight's columns first; a leg that did not run tonight is greyed with when it last ran; older CANN releases
    fold into an archive table."""
    shown, archive = column_order(report)
    return {**_matrix_table(report, links, shown), "clauses": len(report.matrix.clauses),
            "archive": _matrix_table(report, links, archive) if archive else None}


def _matrix_table(report: model.Report, links: Links, order: list[matrix_mod.Column]) -> dict[str, Any]:
    m = report.matrix
    columns = [{"label": c.label, "head": column_head(c), "source": c.source,
                "finished": c.finished_iso or "time unknown",
                "counts": [(o, n) for o, n in sorted(c.counts.items(), key=lambda kv: matrix_mod.outcome_order(kv[0]))],
                "total": len(c.tests), "stale": report.verdict.stale.get(c.label),
                "absent": report.verdict.absent.get(c.label)} for c in order]
    loud, folded = [], {}
    for clause in m.clauses:
        cells = []
        for column in order:
            failing = [t for t in m.cells.get((clause, column.label), []) if t.outcome in matrix_mod.BAD_OUTCOMES]
            counts = m.cell_counts(clause, column.label)
            cells.append({
                "status": m.status(clause, column.label) or "none",
                "counts": " · ".join(f"{n} {o}" for o, n in sorted(counts.items(),
                                                                     key=lambda kv: matrix_mod.outcome_order(kv[0]))),
                "failing": [{"test": t.test, "outcome": "fixed upstream (xpassed)" if t.outcome == "xpassed"
                             else t.outcome, "message": (t.message or "").strip()[-600:],
                             "href": links.source + t.source} for t in failing]})
        if any(c["failing"] for c in cells):
            loud.append({"clauses": [clause], "cells": cells})
        else:
            row = folded.setdefault(tuple(c["status"] for c in cells), {"clauses": [], "cells": cells})
            row["clauses"].append(clause)
    for row in folded.values():
        if len(row["clauses"]) > 1:
            row["cells"] = [{**c, "counts": f"{len(row['clauses'])} clauses"} for c in row["cells"]]
    return {"columns": columns, "rows": loud + list(folded.values())}


def cann_tables(report: model.Report) -> list[dict[str, Any]]:
    """CANN over CANN: per SoC, model and implementation, each CANN version's latest run beside the previous one,
    with the change of every figure's median (with its unit)."""
    return [_version_table(model.group_title(key), [(f"CANN {cann}", run) for cann, run in runs])
            for key, runs in report.cann_runs]


def _version_table(title: str, columns: list[tuple[str, model.Run | None]]) -> dict[str, Any]:
    rows = []
    for label, variant, metric in CANN_FIGURES:
        cells, previous = [], None
        for _, run in columns:
            value = run.median(variant, metric) if run else None
            delta, cls = "", ""
            if value is not None and previous:
                delta = change(value, previous)
                cls = "regressed" if value > 1.10 * previous else ("met" if value < previous / 1.10 else "")
            cells.append({"value": seconds(value), "delta": delta, "cls": cls})
            previous = value if value else previous
        if any(c["value"] != "–" for c in cells):
            rows.append({"figure": label, "cells": cells})
    return {"title": title, "versions": [label for label, _ in columns],
            "runs": [f"{run.date} · torch_npu {run.env.get('torch_npu')}" if run else "no run" for _, run in columns],
            "rows": rows}


def _comparison(report: model.Report, links: Links) -> dict[str, Any] | None:
    cmp = report.comparison
    if cmp is None:
        return None
    tables = [_version_table(title, [(f"CANN {cmp.a}", a), (f"CANN {cmp.b}", b)]) for title, a, b in cmp.runs]
    return {"a": cmp.a, "b": cmp.b, "tables": tables, "tests": _test_rows(cmp.tests, links),
            "legs": _by_leg(_test_rows(cmp.tests, links)), "paired": cmp.paired}


def _versions_rows(columns: list[tuple[str, model.Run]]) -> list[list[str]]:
    rows = []
    for variant in ("impl-warm", "impl-cold", "eager", "aot-load"):
        for metric in ("ttfo_s", "compile_or_load_s"):
            if variant == "eager" and metric == "compile_or_load_s":
                continue
            if any(run.summaries.get(variant, {}).get(metric) for _, run in columns):
                rows.append([f"{VARIANT_LABELS.get(variant, variant)}: {metric[:-2].replace('_', ' ')}"] + [
                    spread(run.summaries.get(variant, {}).get(metric)) for _, run in columns])
    for name in ("warm / cold compile-or-load", "warm TTFO / eager TTFO", "warm TTFO / aot_compile load TTFO"):
        cells = []
        for _, run in columns:
            found = [v for v in run.ratios if v.ratio.name == name]
            cells.append(ratio_text(found[0])[0] if found else "–")
        rows.append([name] + cells)
    rows.append(["run"] + [f"{run.date} ({(run.commit or '')[:7]})" for _, run in columns])
    return rows


def build(report: model.Report, notes: list[str], drawn: Charts, links: Links) -> dict[str, Any]:
    """Everything the templates read: the model's rows, with the charts `drawn` and the `links`."""
    latest = report.latest
    changes = report.changes
    return {
        "banner": _banner(report), "verdict": report.verdict, "rule": report.rule, "last_runs": LAST_RUNS,
        "figures": [f.label for f in gate.FIGURES],
        "latest_date": latest.date if latest else "–", "latest_commit": (latest.commit or "unknown") if latest else "–",
        "latest_dirty": bool(latest and latest.dirty), "run_count": sum(len(s.runs) for s in report.series),
        "history_files": report.history_files, "history_url": links.history,
        "regressions": _regressions(report), "checks": _check_rows(report),
        "changes": {"compared": changes.compared, "tests": _test_rows(changes.tests, links),
                    "legs": _by_leg(_test_rows(changes.tests, links)),
                    "new_legs": changes.new_legs, "missing_legs": changes.missing_legs},
        "summary": _summary_rows(report), "series": [_series_context(report, s, drawn) for s in report.series],
        "stale_series": [f"{s.title} ({report.checks.stale[s.key]})" for s in report.series
                         if s.key in report.checks.stale],
        "cann_tables": cann_tables(report), "compare": _comparison(report, links),
        "versions": [{"name": name, "chart": drawn.get((name, "versions")),
                      "chart_narrow": drawn.get((name, "versions-narrow")),
                      "header": [label for label, _ in columns], "rows": _versions_rows(columns)}
                     for name, columns in report.versions.items()],
        "matrix": _matrix_context(report, links), "variant_header": VARIANT_HEADER, "notes": notes,
        "divergences": divergence_rows(column_order(report)[0], links.source),
    }
