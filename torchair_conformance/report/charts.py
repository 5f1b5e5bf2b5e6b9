"""The report's charts: matplotlib (Agg) PNG files, so the page needs no network and no script to show them."""
from __future__ import annotations

import datetime
import os
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.dates  # noqa: E402 - the backend must be chosen first
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

#: variants in the order the charts show them, with their labels and colours
VARIANTS = (
    ("eager", "eager (no compile)", "#9e9e9e"),
    ("impl-cold", "cache_compile cold", "#d62728"),
    ("impl-warm", "cache_compile warm", "#2ca02c"),
    ("inductor-hot", "torch.compile, hot Inductor caches", "#1f77b4"),
    ("aot-load", "aot_compile: load_compiled_function", "#9467bd"),
    ("aot-save", "aot_compile + save (once)", "#c5b0d5"),
)
SHORT = {"eager": "eager", "impl-cold": "cold", "impl-warm": "warm", "inductor-hot": "torch.compile (hot)",
         "aot-load": "aot load", "aot-save": "aot save"}
#: the phases stacked in a time-to-first-output bar
PHASES = (
    ("startup_import_s", "interpreter + imports", "#c7c7c7"),
    ("build_s", "model build", "#ffbb78"),
    ("compile_or_load_s", "compile or load", "#ff7f0e"),
    ("first_call_s", "first call", "#17becf"),
)
_SAVE = {"dpi": 110, "metadata": {"Software": None}, "bbox_inches": "tight"}


def _panels(narrow: bool, height: float) -> tuple[Any, Any, Any]:
    """Two panels: side by side (wide, for a desk), or one above the other at a phone's width, where the page shows
    the image at about its own size, so 8-point text stays legible."""
    if narrow:
        fig, (first, second) = plt.subplots(2, 1, figsize=(4.6, 2 * height + 0.8))
    else:
        fig, (first, second) = plt.subplots(1, 2, figsize=(11, height), gridspec_kw={"width_ratios": [3, 2]})
    return fig, first, second


def startup(summaries: Mapping[str, Mapping[str, Mapping[str, float]]], title: str, path: str, *,
            narrow: bool = False) -> str:
    """Cold vs warm vs baselines: stacked median phases with min/max whiskers on the TTFO, and compile-or-load."""
    shown = [(v, label) for v, label, _ in VARIANTS if summaries.get(v, {}).get("ttfo_s")]
    fig, left, right = _panels(narrow, 0.55 * max(len(shown), 2) + 1.6)
    y = list(range(len(shown)))
    for phase, label, colour in PHASES:
        starts = [_stack_start(summaries[v], phase) for v, _ in shown]
        widths = [summaries[v].get(phase, {}).get("median", 0.0) for v, _ in shown]
        left.barh(y, widths, left=starts, color=colour, label=label, height=0.6)
    medians = [summaries[v]["ttfo_s"]["median"] for v, _ in shown]
    low = [m - summaries[v]["ttfo_s"]["min"] for m, (v, _) in zip(medians, shown)]
    high = [summaries[v]["ttfo_s"]["max"] - m for m, (v, _) in zip(medians, shown)]
    left.errorbar(medians, y, xerr=[low, high], fmt="none", ecolor="black", capsize=4, linewidth=1)
    for yi, m, h in zip(y, medians, high):
        left.annotate(f"{m:.2f} s", (m + h, yi), xytext=(6, 0), textcoords="offset points", va="center", fontsize=8)
    left.set_yticks(y, [SHORT[v] if narrow else label for v, label in shown], fontsize=8)
    left.invert_yaxis()
    left.set_xlabel("time to first output, s (median phases; whiskers: min/max)", fontsize=8)
    left.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.3 if narrow else -0.2),
                ncol=2 if narrow else len(PHASES), frameon=False)
    left.set_xlim(0, max(m + h for m, h in zip(medians, high)) * 1.25 if medians else 1)

    loads = [(v, label) for v, label in shown if summaries[v].get("compile_or_load_s", {}).get("median", 0) > 0]
    ry = list(range(len(loads)))
    values = [summaries[v]["compile_or_load_s"] for v, _ in loads]
    colours = [dict((v, c) for v, _, c in VARIANTS)[v] for v, _ in loads]
    right.barh(ry, [s["median"] for s in values], color=colours, height=0.6,
               xerr=[[s["median"] - s["min"] for s in values], [s["max"] - s["median"] for s in values]],
               error_kw={"capsize": 4, "linewidth": 1})
    for yi, s, (variant, _) in zip(ry, values, loads):
        right.annotate(f"{_seconds(s['median'])}  {SHORT[variant]}", (s["max"], yi), xytext=(6, 0),
                       textcoords="offset points", va="center", fontsize=8)
    right.set_yticks([])
    right.invert_yaxis()
    right.tick_params(axis="x", labelsize=7)
    right.set_xscale("log")
    if values:
        lowest, highest = min(s["min"] for s in values), max(s["max"] for s in values)
        right.set_xlim(lowest / 3, highest * 300)
    right.set_xlabel("compile or load, s (log; whiskers: min/max)", fontsize=8)
    if narrow:
        fig.subplots_adjust(hspace=0.9)
    fig.suptitle(_wrap(title, 60 if narrow else 140), fontsize=8 if narrow else 9, y=1.0, va="bottom")
    return _save(fig, path)


def trend(runs: Sequence[Mapping[str, Any]], title: str, path: str, *, narrow: bool = False) -> str:
    """Per run, on a date axis: TTFO medians (min/max band) of cold, warm, eager and the hot baselines (left), and
    the warm load on its own log axis (right), where a change of tens of milliseconds is visible; gate findings
    ringed red."""
    fig, ax, load_ax = _panels(narrow, 3.4 if not narrow else 2.6)
    dates = [_date(r["date"]) for r in runs]
    for variant, label, colour in VARIANTS[:5]:
        points = [(d, r["summaries"].get(variant, {}).get("ttfo_s"), r) for d, r in zip(dates, runs)]
        points = [(d, s, r) for d, s, r in points if s]
        if not points:
            continue
        xs = [d for d, _, _ in points]
        ax.plot(xs, [s["median"] for _, s, _ in points], marker="o", markersize=3, color=colour, label=label,
                linewidth=1.2)
        ax.fill_between(xs, [s["min"] for _, s, _ in points], [s["max"] for _, s, _ in points], color=colour,
                        alpha=0.15)
        _ring(ax, [(d, s["median"]) for d, s, r in points if (variant, "ttfo_s") in r.get("regressed", ())])
    ax.set_ylabel("time to first output, s")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7, loc="center left", ncol=2, framealpha=0.8)
    points = [(d, r["summaries"].get("impl-warm", {}).get("compile_or_load_s"), r) for d, r in zip(dates, runs)]
    points = [(d, s, r) for d, s, r in points if s and s.get("median", 0) > 0]
    if points:
        colour = dict((v, c) for v, _, c in VARIANTS)["impl-warm"]
        xs = [d for d, _, _ in points]
        load_ax.plot(xs, [s["median"] for _, s, _ in points], marker="o", markersize=3, color=colour, linewidth=1.2)
        load_ax.fill_between(xs, [s["min"] for _, s, _ in points], [s["max"] for _, s, _ in points], color=colour,
                             alpha=0.15)
        _ring(load_ax, [(d, s["median"]) for d, s, r in points
                        if ("impl-warm", "compile_or_load_s") in r.get("regressed", ())])
        _log_seconds(load_ax, min(s["min"] for _, s, _ in points), max(s["max"] for _, s, _ in points))
    load_ax.set_ylabel("warm load (compile or load), log", fontsize=8)
    for axis in (ax, load_ax):
        locator = matplotlib.dates.AutoDateLocator(minticks=3, maxticks=7)
        axis.xaxis.set_major_locator(locator)
        axis.xaxis.set_major_formatter(matplotlib.dates.ConciseDateFormatter(locator))
        axis.tick_params(axis="both", labelsize=7)
        axis.grid(alpha=0.3)
    if narrow:
        fig.subplots_adjust(hspace=0.35)
    fig.suptitle(_wrap(title + "  (red ring: gate finding)", 60 if narrow else 130), fontsize=8 if narrow else 9,
                 y=1.0, va="bottom")
    return _save(fig, path)


def versions(columns: Sequence[tuple[str, Mapping[str, Mapping[str, Mapping[str, float]]]]], title: str,
             path: str, *, narrow: bool = False) -> str:
    """Versions side by side: cold, warm and eager TTFO medians with min/max whiskers (left), and the warm load on
    its own log axis (right), where a change of tens of milliseconds between CANN releases is visible."""
    fig, ax, load_ax = _panels(narrow, 4.0 if not narrow else 3.2)
    labels = [_wrap(name, 17) for name, _ in columns]
    shown = list(VARIANTS[:3])
    width = 0.8 / len(shown)
    for k, (variant, label, colour) in enumerate(shown):
        xs, med, lo, hi = [], [], [], []
        for i, (_, summaries) in enumerate(columns):
            s = summaries.get(variant, {}).get("ttfo_s")
            if s:
                xs.append(i + (k - (len(shown) - 1) / 2) * width)
                med.append(s["median"])
                lo.append(s["median"] - s["min"])
                hi.append(s["max"] - s["median"])
        if xs:
            ax.bar(xs, med, width=width, color=colour, label=label, yerr=[lo, hi], capsize=3)
    ax.set_xticks(range(len(columns)), labels, fontsize=7)
    ax.set_ylabel("time to first output, s")
    ax.legend(fontsize=7, loc="upper left", framealpha=0.8)
    loads = [(i, summaries.get("impl-warm", {}).get("compile_or_load_s")) for i, (_, summaries) in enumerate(columns)]
    loads = [(i, s) for i, s in loads if s and s.get("median", 0) > 0]
    if loads:
        colour = dict((v, c) for v, _, c in VARIANTS)["impl-warm"]
        load_ax.bar([i for i, _ in loads], [s["median"] for _, s in loads], width=0.5, color=colour,
                    yerr=[[s["median"] - s["min"] for _, s in loads], [s["max"] - s["median"] for _, s in loads]],
                    capsize=3)
        for i, s in loads:
            load_ax.annotate(_seconds(s["median"]), (i, s["max"]), xytext=(0, 3), textcoords="offset points",
                             ha="center", fontsize=7)
        _log_seconds(load_ax, min(s["min"] for _, s in loads), max(s["max"] for _, s in loads))
    load_ax.set_xticks(range(len(columns)), labels, fontsize=7)
    load_ax.set_ylabel("warm load (compile or load), log", fontsize=8)
    if narrow:
        fig.subplots_adjust(hspace=0.6)
    fig.suptitle(_wrap(title, 60 if narrow else 140), fontsize=8 if narrow else 9, y=1.0, va="bottom")
    return _save(fig, path)


def _log_seconds(axis: Any, low: float, high: float) -> None:
    """A log y axis from `low` to `high` with readable second/millisecond labels, even within one decade."""
    axis.set_yscale("log")
    axis.set_ylim(low / 1.6, high * 1.6)
    subs = (1.0,) if high / low > 30 else (1.0, 2.0, 3.0, 4.0, 5.0, 7.0)
    axis.yaxis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=subs))
    axis.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: _seconds(v)))
    axis.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())


def _ring(ax: Any, points: Sequence[tuple[Any, float]]) -> None:
    if points:
        ax.scatter([d for d, _ in points], [v for _, v in points], s=120, facecolors="none", edgecolors="red",
                   linewidths=2, zorder=5)


def _date(text: str) -> datetime.datetime:
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")


def _wrap(text: str, width: int) -> str:
    """Long labels and titles on several lines (each given line wrapped on its own)."""
    return "\n".join("\n".join(textwrap.wrap(line, width, break_on_hyphens=False)) or line
                     for line in text.split("\n"))


def _stack_start(summary: Mapping[str, Mapping[str, float]], phase: str) -> float:
    start = 0.0
    for name, _, _ in PHASES:
        if name == phase:
            return start
        start += summary.get(name, {}).get("median", 0.0)
    return start


def _seconds(value: float) -> str:
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.1f} ms"
    return f"{value * 1e6:.0f} us"


def _save(fig: Any, path: str) -> str:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig.savefig(path, **_SAVE)
    plt.close(fig)
    return path
