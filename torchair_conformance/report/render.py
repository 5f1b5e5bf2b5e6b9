"""`reports/index.html`, `reports/README.md`, the charts and the verdict files, from the report's data (BE-4).

The renderer: it reads a `model.Report` (built by `model.build`, which runs the gate and the verdict) and changes
nothing in it. `context` shapes the model for the jinja2 templates in `templates/`; `charts` draws each chart twice,
wide for a desk and narrow for a phone (the page picks one by its width); `outputs` writes `verdict.json` and the
JUnit file. Rendering happens in a staging folder and replaces the published files only once everything rendered, so
a failure leaves the published report as it was.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2

from torchair_conformance.report import charts, context, outputs
from torchair_conformance.report.model import Report

CHART_DIR = "charts"
#: the pages; with `outputs.VERDICT_JSON`, `outputs.JUNIT_XML` and `charts/*.png`, every file a render writes
PAGES = ("index.html", "README.md")
#: the published pages' links (the default of `write`)
_LINKS = context.Links()
_TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("torchair_conformance.report", "templates"),
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
    check_rows=lambda rows: [[r["series"], r["figure"], r["kind"], r["value"], r["baseline"], r["factor"], r["p"],
                              r["status"] + (f": {r['reason']}" if r["reason"] else "")] for r in rows],
    version_rows=lambda rows: [[r["figure"]] + [c["value"] + (f" ({c['delta']})" if c["delta"] else "")
                                                for c in r["cells"]] for r in rows],
    test_rows=lambda rows: [[r["kind"], f"`{r['test']}`", f"{r['before']} → {r['now']}", r["leg"]] for r in rows],
    matrix_rows=lambda rows: [[", ".join(r["clauses"])] + [
        (c["status"] if c["status"] != "none" else "–") + (f" ({c['counts']})" if c["counts"] else "")
        + "".join(f"; {t['test']} ({t['outcome']})" for t in c["failing"]) for c in r["cells"]] for r in rows],
    divergence_rows=lambda rows: [[f"`{r['test']}`", f"{r['outcome']} ({r['verdict']})", r["evidence"],
                                   f"`{r['expected']}`", r["where"], r["actual"]] for r in rows],
    matrix_heads=lambda columns: [c["head"] + (f" ({c['absent']})" if c["absent"] else "") for c in columns],
    summary_rows=lambda rows: [[r["title"], r["date"] + (" (dirty)" if r["dirty"] else ""), r["warm"], r["load"],
                                r["cold"], r["warm_cold"], r["warm_eager"], r["gate"]] for r in rows],
    variant_rows=lambda rows: [[r["label"]] + ([c["text"] for c in r["cells"]] or [r["skipped"]]) for r in rows],
)


def write(report: Report, out_dir: str | os.PathLike, environ: Mapping[str, str] | None = None,
          links: context.Links = _LINKS) -> list[Path]:
    """Render charts, pages (linking where `links` says), `verdict.json` and the JUnit file in a staging folder,
    then replace the published ones; last, append the step summary to `$GITHUB_STEP_SUMMARY` when it is set."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".report-", dir=out))
    try:
        drawn = _render_charts(report, staging / CHART_DIR)
        page_context = context.build(report, NOTES, drawn, links)
        for page in PAGES:
            (staging / page).write_text(_TEMPLATES.get_template(f"{page}.j2").render(page_context), encoding="utf-8")
        files = [Path(f).name for f in outputs.write(report, staging)]
        chart_dir = out / CHART_DIR
        chart_dir.mkdir(exist_ok=True)
        for stale in chart_dir.glob("*.png"):
            stale.unlink()
        written = []
        for chart in sorted((staging / CHART_DIR).glob("*.png")):
            written.append(Path(shutil.move(str(chart), str(chart_dir / chart.name))))
        for name in (*files, *PAGES):
            written.append(Path(shutil.move(str(staging / name), str(out / name))))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    outputs.append_step_summary(report, environ)
    return written


def _chart(drawn: dict[tuple[str, str], str], key: tuple[str, str], chart_dir: Path, name: str, draw: Any,
           *args: Any) -> None:
    """Draw one chart wide and narrow (`<name>.png`, `<name>-narrow.png`) and note both paths in `drawn`."""
    for suffix, narrow in (("", False), ("-narrow", True)):
        draw(*args, str(chart_dir / f"{name}{suffix}.png"), narrow=narrow)
        drawn[(key[0], key[1] + suffix)] = f"{CHART_DIR}/{name}{suffix}.png"


def _render_charts(report: Report, chart_dir: Path) -> dict[tuple[str, str], str]:
    """Draw every chart the report has data for; returns (series slug or version group, kind) -> its path."""
    chart_dir.mkdir(parents=True, exist_ok=True)
    drawn: dict[tuple[str, str], str] = {}
    for series in report.series:
        run = series.latest
        if any(s.get("ttfo_s") for s in run.summaries.values()):
            _chart(drawn, (series.slug, "latest"), chart_dir, f"{series.slug}-latest", charts.startup,
                   run.summaries, f"{series.title}\nrun {run.date}, {run.bench.get('rounds')} rounds")
        if len(series.runs) > 1:
            shown = series.runs[-context.LAST_RUNS:]
            # a trend marks the plain figures that regressed (a ratio check is marked on its numerator's figure)
            fired = [c for c in report.fired(series) if c.figure.den_variant is None]
            runs = [{"date": r.date, "commit": r.commit, "summaries": r.summaries,
                     "regressed": {(c.figure.variant, c.figure.metric) for c in fired if c.run.run_id == r.run_id}}
                    for r in shown]
            _chart(drawn, (series.slug, "trend"), chart_dir, f"{series.slug}-trend", charts.trend, runs,
                   f"trend, last {len(shown)} of {len(series.runs)} runs: {series.title}")
    for name, columns in report.versions.items():
        if len(columns) > 1:
            # the group's name is long and free text: a digest makes a stable, safe file name
            slug = hashlib.sha1(name.encode()).hexdigest()[:8]
            _chart(drawn, (name, "versions"), chart_dir, f"versions-{slug}", charts.versions,
                   [(label, run.summaries) for label, run in columns], f"versions side by side: {name}")
    return drawn


NOTES = [
    "Cold start: a fresh process with an empty cache folder (and an empty Inductor cache). Warm start: a fresh "
    "process with the folder a cold run left (and an empty Inductor cache, so nothing else carries over). N rounds "
    "each, interleaved with the baselines; medians with [min–max] (SPEC BE-1).",
    "Phases (BE-2), measured inside the worker with time.perf_counter, from the parent's spawn time: interpreter + "
    "imports (import torch, torch_npu, the implementation), model build (and wrapping the method), compile or load, "
    "first call, steady-state call. Compile or load is measured from the implementation's 'loaded from' log record "
    "on a warm start, as an explicit call for aot_compile, and otherwise as the first call's time beyond the second "
    "call's; eager compiles nothing ('–').",
    "Baselines, measured in the same run: eager (no compile); torch.compile with Inductor on Inductor caches a "
    "priming run made hot; PyTorch's aot_compile + save (once) and torch.compiler.load_compiled_function (with the "
    "Inductor cache its save left). 'traced' (CC-14's evidence) counts the runs that imported Dynamo or Inductor or "
    "counted a Dynamo graph: a warm start must show 0.",
    "The gate judges figures normalised within the run (warm TTFO ÷ eager TTFO, warm load ÷ cold compile, cold TTFO "
    "÷ eager TTFO, warm steady call ÷ eager steady call: per-round ratios of variants measured in the same process "
    "pool), never a figure a slower host moves alone. Each series' latest run is compared with its own last normal "
    "nights and, on an NPU, with the previous CANN version's on the same SoC, model and implementation: a change "
    "exceeds the baseline's median by more than the floor and the baseline's own noise times the sigmas (a robust "
    "spread of its nights). A change is suspected on its first night, or while the baseline has too few nights; "
    "confirmed the next night (or at once when large), it is a regression. Runs on a busy host, series not run "
    "tonight and changes accepted in reports/accepted-changes.json are shown, not judged. One slowed figure is one "
    "entry, with every check that saw it beneath.",
    "Changed since last night: each leg's tests against the previous night's verdict.json (new failures, fixed, "
    "new skips). The conformance matrix folds the clauses whose cells read the same.",
    "Per-call overhead: the warm cached callable against the same graph compiled by the same graph compiler and "
    "called directly (Inductor's generated call, or the ATen graph), on tiny, where overhead dominates.",
    "Targets for the reference (gpt-small with Inductor; overhead on tiny): warm TTFO ≤ 1.15× eager's; warm compile "
    "or load ≤ 1/30 of cold; warm TTFO ≤ 0.6× aot_compile load's; per-call overhead ≤ 3 µs.",
]
