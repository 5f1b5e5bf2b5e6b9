"""`reports/index.html` and `reports/README.md` from the history and the suite's results (SPEC BE-4).

Per series (environment key + benchmark, see `history.series_key`): cold vs warm vs baseline bars with min/max
whiskers (latest run), the phases, the ratios against the baselines with the reference's targets, the per-call
overhead, the trend over runs with regressions ringed; then versions (CANN, torch_npu, torch) side by side per
benchmark, the regressions against the median of earlier runs, and the conformance matrix. Charts are PNG files in
`charts/` beside the pages; the pages load nothing else.
"""
from __future__ import annotations

import hashlib
import html
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from conformance.report import charts, history, matrix as matrix_mod, stats

CHART_DIR = "charts"
#: (column title, metric) of the per-variant table
PHASE_COLUMNS = (
    ("time to first output", "ttfo_s"),
    ("interpreter + imports", "startup_import_s"),
    ("model build", "build_s"),
    ("compile or load", "compile_or_load_s"),
    ("first call", "first_call_s"),
    ("steady call", "steady_s"),
)
VARIANT_LABELS = {v: label for v, label, _ in charts.VARIANTS} | {"inductor-prime": "torch.compile priming run"}


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
        return (f"{env.get('impl')} {env.get('impl_version') or ''} · {bench.get('model')}.{bench.get('method')} · "
                f"{bench.get('mode')} · {'dynamic' if bench.get('dynamic') else 'static'} · graph compiler "
                f"{bench.get('compiler')} · {version_label(env)} · {env.get('device')} ({env.get('soc')})")


def version_label(env: dict[str, Any]) -> str:
    parts = [f"torch {env.get('torch')}"]
    if env.get("torch_npu"):
        parts.append(f"torch_npu {env['torch_npu']}")
    parts.append(f"CANN {env['cann']}" if env.get("cann") else "no CANN")
    return " · ".join(parts)


def group(records: Iterable[history.Record]) -> list[Series]:
    """Records -> series (by key) -> runs (by run id), oldest first."""
    by_key: dict[tuple, dict[str, Run]] = {}
    for record in records:
        runs = by_key.setdefault(record.key(), {})
        run = runs.setdefault(record.run_id, Run(record.run_id, record.date, record.commit, record.env, record.bench))
        run.records[record.variant] = record
    series = [Series(key, sorted(runs.values(), key=lambda r: (r.date, r.run_id))) for key, runs in by_key.items()]
    series.sort(key=lambda s: (str(s.latest.bench.get("model")), s.title))
    return series


@dataclass
class Report:
    series: list[Series]
    regressions: list[stats.Regression]
    matrix: matrix_mod.Matrix
    threshold: float
    history_files: list[str]
    #: (series slug or version group, kind) -> chart path relative to the pages
    charts: dict[tuple[str, str], str] = field(default_factory=dict)

    def regressed(self, run: Run) -> list[stats.Regression]:
        return [r for r in self.regressions if r.run_id == run.run_id and r.key == history.series_key(run.env,
                                                                                                     run.bench)]


def build(records: list[history.Record], matrix: matrix_mod.Matrix, *, threshold: float,
          history_files: list[str]) -> Report:
    return Report(group(records), stats.regressions(records, threshold=threshold), matrix, threshold, history_files)


def write(report: Report, out_dir: str | os.PathLike) -> list[Path]:
    """Render the charts, `index.html` and `README.md` into `out_dir`; returns the files written."""
    out = Path(out_dir)
    chart_dir = out / CHART_DIR
    chart_dir.mkdir(parents=True, exist_ok=True)
    for stale in chart_dir.glob("*.png"):
        stale.unlink()
    written = []
    for series in report.series:
        run = series.latest
        if any(s.get("ttfo_s") for s in run.summaries.values()):
            name = f"{series.slug}-latest.png"
            charts.startup(run.summaries, f"{series.title}\nrun {run.date}, {run.bench.get('rounds')} rounds",
                           str(chart_dir / name))
            report.charts[(series.slug, "latest")] = f"{CHART_DIR}/{name}"
        if len(series.runs) > 1:
            name = f"{series.slug}-trend.png"
            runs = [{"date": r.date, "commit": r.commit, "summaries": r.summaries,
                     "regressed": {(g.variant, g.metric) for g in report.regressed(r)}} for r in series.runs]
            charts.trend(runs, f"trend: {series.title}", str(chart_dir / name))
            report.charts[(series.slug, "trend")] = f"{CHART_DIR}/{name}"
    for name, columns in version_groups(report.series).items():
        if len(columns) > 1:
            slug = hashlib.sha1(name.encode()).hexdigest()[:8]
            file = f"versions-{slug}.png"
            charts.versions([(label, run.summaries) for label, run in columns], f"versions side by side: {name}",
                            str(chart_dir / file))
            report.charts[(name, "versions")] = f"{CHART_DIR}/{file}"
    written += sorted(chart_dir.glob("*.png"))
    (out / "index.html").write_text(to_html(report), encoding="utf-8")
    (out / "README.md").write_text(to_markdown(report), encoding="utf-8")
    return written + [out / "index.html", out / "README.md"]


def version_groups(series: list[Series]) -> dict[str, list[tuple[str, Run]]]:
    """Benchmarks with their latest run per version set (CANN, torch_npu, torch, implementation version)."""
    groups: dict[str, list[tuple[str, Run]]] = {}
    for s in series:
        env, bench = s.latest.env, s.latest.bench
        name = (f"{env.get('impl')} · {bench.get('model')}.{bench.get('method')} · {bench.get('mode')} · "
                f"{'dynamic' if bench.get('dynamic') else 'static'} · {bench.get('compiler')} · {env.get('device')} "
                f"({env.get('soc')})")
        label = f"{version_label(env)} · {env.get('impl')} {env.get('impl_version') or ''}".strip()
        groups.setdefault(name, []).append((label, s.latest))
    for columns in groups.values():
        columns.sort(key=lambda c: (str(c[1].env.get("cann")), c[0]))
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
    if not summary:
        return "–"
    value = summary["median"]
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
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


def overhead_row(run: Run) -> dict[str, Any] | None:
    samples = run.samples.get("overhead")
    return samples[-1] if samples else None


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


VARIANT_HEADER = [title for title, _ in PHASE_COLUMNS] + ["artifact", "traced", "compile/load measured", "runs"]


# -- HTML -------------------------------------------------------------------------------------------------------

_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1250px; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; } h3 { font-size: 1.05em; }
table { border-collapse: collapse; margin: .6em 0 1.2em; font-size: 12.5px; }
th, td { border: 1px solid #ddd; padding: 3px 7px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.met { color: #1a7f37; font-weight: 600; } .missed, .fail, .regressed { color: #c62828; font-weight: 600; }
.pass { background: #e6f4ea; } .fail { background: #fde7e9; } .xfail { background: #fff4e0; }
.xpass { background: #fde7e9; } .skip { background: #f1f1f1; color: #777; } .none { color: #bbb; }
img.chart { max-width: 100%; border: 1px solid #eee; } img.chart.missing { display: none; }
.note { color: #555; font-size: 12.5px; } code { background: #f4f4f4; padding: 0 3px; }
"""

_SCRIPT = """
window.addEventListener("load", function () {
  var imgs = document.querySelectorAll("img.chart"), shown = 0;
  imgs.forEach(function (img) {
    if (img.complete && img.naturalWidth > 0) { shown++; } else { img.classList.add("missing"); }
  });
  document.body.dataset.chartsShown = shown + "/" + imgs.length;
});
"""


def _e(value: Any) -> str:
    return html.escape(str(value))


def _table(header: list[str], rows: list[list[str]], *, raw: bool = False, cls: str = "") -> str:
    """An HTML table; cells are escaped unless `raw` (then they are HTML already)."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = "".join(f"<td>{c if raw else _e(c)}</td>" for c in row)
        body.append(f"<tr>{cells}</tr>")
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _img(report: Report, key: tuple, alt: str) -> str:
    src = report.charts.get(key)
    return f'<p><img class="chart" src="{_e(src)}" alt="{_e(alt)}"></p>' if src else ""


def to_html(report: Report) -> str:
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        "<title>TorchAir compile cache: cold vs warm start</title>",
        f"<style>{_CSS}</style><script>{_SCRIPT}</script></head><body>",
        "<h1>TorchAir compile cache: cold vs warm start, and conformance</h1>",
        f'<p class="note">{_e(_provenance(report))}</p>',
    ]
    parts.append("<h2 id=\"summary\">Summary (latest run of each series)</h2>")
    parts.append(_table(*_summary_table(report)))
    for series in report.series:
        run = series.latest
        parts.append(f'<h2 id="{_e(series.slug)}">{_e(series.title)}</h2>')
        parts.append(f'<p class="note">{_e(_run_note(run))}</p>')
        parts.append(_img(report, (series.slug, "latest"), f"cold vs warm start, {series.title}"))
        parts.append("<h3>Phases: median [min–max] over the rounds</h3>")
        parts.append(_table(["variant"] + VARIANT_HEADER, [[label] + cells for label, cells in variant_rows(run)]))
        parts.append("<h3>Ratios against the baselines</h3>")
        rows = []
        for value in stats.ratios(run.samples):
            text, target, verdict = ratio_text(value)
            rows.append([_e(value.ratio.name), f'<span class="num">{_e(text)}</span>', _e(target),
                         f'<span class="{verdict}">{verdict}</span>'])
        over = overhead_row(run)
        if over:
            verdict = "met" if over["overhead_s"] <= stats.OVERHEAD_TARGET_S else "missed"
            rows.append([_e(f"per-call overhead ({over['compiler']} graph): cached {seconds(over['cached_call_s'])} "
                            f"vs graph called directly {seconds(over['direct_call_s'])}"),
                         _e(seconds(over["overhead_s"])), _e(f"≤ {seconds(stats.OVERHEAD_TARGET_S)}"),
                         f'<span class="{verdict}">{verdict}</span>'])
        parts.append(_table(["ratio (of medians; [min–max] per round)", "value", "target (reference)", ""], rows,
                            raw=True))
        if len(series.runs) > 1:
            parts.append(f"<h3>Trend over {len(series.runs)} runs</h3>")
            parts.append(_img(report, (series.slug, "trend"), f"trend, {series.title}"))
        parts.append(_table(["run", "commit", "host", "warm TTFO", "cold TTFO", "regressions"],
                            [_run_row(report, r) for r in reversed(series.runs)]))
    parts.append('<h2 id="versions">Versions side by side</h2>')
    for name, columns in version_groups(report.series).items():
        parts.append(f"<h3>{_e(name)}</h3>")
        parts.append(_img(report, (name, "versions"), f"versions side by side, {name}"))
        parts.append(_table(*_versions_table(columns)))
    parts.append('<h2 id="regressions">Regressions</h2>')
    parts.append(f'<p class="note">A run regresses when a median (time to first output, compile or load, steady '
                 f'call, per-call overhead) exceeds {report.threshold:g}× the median of the earlier runs of the same '
                 f"series and variant, by more than a small floor per metric.</p>")
    regressions = _regression_rows(report)
    parts.append(_table(["date", "series", "variant", "metric", "value", "earlier median", "factor"],
                        regressions) if regressions else "<p>None.</p>")
    parts.append('<h2 id="conformance">Conformance matrix</h2>')
    parts.append(_matrix_html(report.matrix))
    parts.append("<h2>How to read this</h2>" + _notes_html())
    parts.append("</body></html>")
    return "\n".join(p for p in parts if p) + "\n"


def _provenance(report: Report) -> str:
    runs = sum(len(s.runs) for s in report.series)
    dates = [s.latest.date for s in report.series]
    latest = max(dates) if dates else "–"
    return (f"{runs} runs in {len(report.series)} series from {', '.join(report.history_files) or 'no history'}; "
            f"latest run {latest}. Rendered by `python -m conformance report`.")


def _summary_table(report: Report) -> tuple[list[str], list[list[str]]]:
    header = ["series", "warm TTFO", "cold TTFO", "warm / cold compile-or-load", "warm / eager TTFO",
              "warm / aot load TTFO", "per-call overhead", "regressions (latest run)"]
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

        over = overhead_row(run)
        rows.append([s.title, spread(run.summaries.get("impl-warm", {}).get("ttfo_s")),
                     spread(run.summaries.get("impl-cold", {}).get("ttfo_s")),
                     r("warm / cold compile-or-load"), r("warm TTFO / eager TTFO"),
                     r("warm TTFO / aot_compile load TTFO"), seconds(over["overhead_s"]) if over else "–",
                     str(len(report.regressed(run)))])
    return header, rows


def _run_note(run: Run) -> str:
    env = run.env
    load = next((r.load_avg for r in run.records.values() if r.load_avg), None)
    load_text = (f", host load average (1/5/15 min) {load.get('start')} at the start and {load.get('end')} at the end"
                 if load else "")
    return (f"Latest run {run.date}, commit {run.commit or 'unknown'}, host {env.get('host')}, Python "
            f"{env.get('python')}, {env.get('threads')} CPU thread(s), {run.bench.get('rounds')} rounds, ge_cache "
            f"{run.bench.get('ge_cache')}{load_text}.")


def _run_row(report: Report, run: Run) -> list[str]:
    summaries = run.summaries
    return [run.date, (run.commit or "")[:12], str(run.env.get("host")),
            spread(summaries.get("impl-warm", {}).get("ttfo_s")), spread(summaries.get("impl-cold", {}).get("ttfo_s")),
            ", ".join(f"{g.variant} {g.metric} ×{g.factor:.2f}" for g in report.regressed(run)) or "–"]


def _versions_table(columns: list[tuple[str, Run]]) -> tuple[list[str], list[list[str]]]:
    header = ["figure"] + [label for label, _ in columns]
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
    return header, rows


def _regression_rows(report: Report) -> list[list[str]]:
    titles = {s.key: s.title for s in report.series}
    return [[g.date, titles.get(g.key, "?"), g.variant, g.metric, seconds(g.value), seconds(g.baseline),
             f"×{g.factor:.2f} (over {g.earlier_runs} earlier runs)"] for g in report.regressions]


def _matrix_html(m: matrix_mod.Matrix) -> str:
    if not m.clauses:
        return ("<p>No conformance results found (the suite's JSON results, "
                "<code>reports/conformance/*.json</code>).</p>")
    head = "".join(f"<th>{_e(c)}</th>" for c in m.columns)
    rows = []
    for clause in m.clauses:
        cells = []
        for column in m.columns:
            status = m.status(clause, column)
            counts = m.cells.get((clause, column), {})
            title = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
            cells.append(f'<td class="{status or "none"}" title="{_e(title)}">{_e(status or "–")}</td>')
        rows.append(f"<tr><th>{_e(clause)}</th>{''.join(cells)}</tr>")
    totals = "".join(
        f"<td>{_e(', '.join(f'{n} {k}' for k, n in sorted(m.totals(c).items())))}</td>" for c in m.columns)
    sources = ", ".join(m.sources)
    return (f'<p class="note">From {_e(sources)}. A cell is <code>fail</code> if any test naming the clause failed, '
            f"<code>xpass</code> if a known divergence passed (stale entry), else <code>pass</code>, "
            f"<code>xfail</code> (known divergence) or <code>skip</code>.</p>"
            f'<table class="matrix"><thead><tr><th>clause</th>{head}</tr></thead><tbody>{"".join(rows)}'
            f"<tr><th>tests</th>{totals}</tr></tbody></table>")


_NOTES = [
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
    "Per-call overhead: the warm cached callable against the same graph compiled by the same graph compiler and "
    "called directly (Inductor's generated call, or the ATen graph), on tiny, where overhead dominates.",
    "Targets for the reference (gpt-small with Inductor; overhead on tiny): warm TTFO ≤ 1.15× eager's; warm compile "
    "or load ≤ 1/30 of cold; warm TTFO ≤ 0.6× aot_compile load's; per-call overhead ≤ 3 µs.",
]


def _notes_html() -> str:
    return "<ul>" + "".join(f"<li>{_e(n)}</li>" for n in _NOTES) + "</ul>"


# -- Markdown ---------------------------------------------------------------------------------------------------


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    def cell(value: str) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def to_markdown(report: Report) -> str:
    parts = ["# TorchAir compile cache: cold vs warm start, and conformance", "",
             "The same report with the same charts as `index.html`, for reading on the forge. Re-render with "
             "`python -m conformance report` (`tox -e report`).", "", _provenance(report), "",
             "## Summary (latest run of each series)", "", _md_table(*_summary_table(report)), ""]
    for series in report.series:
        run = series.latest
        parts += [f"## {series.title}", "", _run_note(run), ""]
        if (series.slug, "latest") in report.charts:
            parts += [f"![cold vs warm start]({report.charts[(series.slug, 'latest')]})", ""]
        parts += ["Phases, median [min–max] over the rounds:", "",
                  _md_table(["variant"] + VARIANT_HEADER, [[label] + cells for label, cells in variant_rows(run)]),
                  ""]
        rows = [[v.ratio.name, *ratio_text(v)] for v in stats.ratios(run.samples)]
        over = overhead_row(run)
        if over:
            rows.append([f"per-call overhead ({over['compiler']} graph): cached {seconds(over['cached_call_s'])} vs "
                         f"graph called directly {seconds(over['direct_call_s'])}", seconds(over["overhead_s"]),
                         f"≤ {seconds(stats.OVERHEAD_TARGET_S)}",
                         "met" if over["overhead_s"] <= stats.OVERHEAD_TARGET_S else "missed"])
        parts += [_md_table(["ratio (of medians; [min–max] per round)", "value", "target (reference)", ""], rows), ""]
        if (series.slug, "trend") in report.charts:
            parts += [f"Trend over {len(series.runs)} runs:", "",
                      f"![trend]({report.charts[(series.slug, 'trend')]})", ""]
    parts += ["## Versions side by side", ""]
    for name, columns in version_groups(report.series).items():
        parts += [f"### {name}", ""]
        if (name, "versions") in report.charts:
            parts += [f"![versions]({report.charts[(name, 'versions')]})", ""]
        parts += [_md_table(*_versions_table(columns)), ""]
    parts += ["## Regressions", "", f"Against the median of earlier runs of the same series, threshold "
              f"{report.threshold:g}×.", ""]
    regressions = _regression_rows(report)
    parts += [_md_table(["date", "series", "variant", "metric", "value", "earlier median", "factor"], regressions)
              if regressions else "None.", ""]
    parts += ["## Conformance matrix", ""]
    m = report.matrix
    if m.clauses:
        rows = [[c] + [m.status(c, col) or "–" for col in m.columns] for c in m.clauses]
        parts += [f"From {', '.join(m.sources)}.", "", _md_table(["clause"] + m.columns, rows), ""]
    else:
        parts += ["No conformance results found (`reports/conformance/*.json`).", ""]
    parts += ["## How to read this", ""] + [f"- {n}" for n in _NOTES] + [""]
    return "\n".join(parts)
