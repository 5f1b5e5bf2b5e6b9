"""The report's charts: matplotlib (Agg) PNG files, so the page needs no network and no script to show them."""
from __future__ import annotations

import os
from typing import Any, Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - the backend must be chosen first

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


def startup(summaries: Mapping[str, Mapping[str, Mapping[str, float]]], title: str, path: str) -> str:
    """Cold vs warm vs baselines: stacked median phases with min/max whiskers on the TTFO, and compile-or-load."""
    shown = [(v, label) for v, label, _ in VARIANTS if summaries.get(v, {}).get("ttfo_s")]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 0.55 * max(len(shown), 2) + 1.6),
                                      gridspec_kw={"width_ratios": [3, 2]})
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
    left.set_yticks(y, [label for _, label in shown], fontsize=8)
    left.invert_yaxis()
    left.set_xlabel("time to first output, s (median phases; whiskers: min/max)")
    left.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=len(PHASES), frameon=False)
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
    right.set_xscale("log")
    if values:
        lowest, highest = min(s["min"] for s in values), max(s["max"] for s in values)
        right.set_xlim(lowest / 3, highest * 300)
    right.set_xlabel("compile or load, s (log; whiskers: min/max)")
    fig.suptitle(title, fontsize=9)
    return _save(fig, path)


def trend(runs: Sequence[Mapping[str, Any]], title: str, path: str) -> str:
    """TTFO medians (min/max band) per run for the cold, warm and eager variants; regressions marked."""
    fig, ax = plt.subplots(figsize=(11, 3.2))
    x = list(range(len(runs)))
    for variant, label, colour in VARIANTS[:3] + VARIANTS[3:5]:
        points = [(i, r["summaries"].get(variant, {}).get("ttfo_s")) for i, r in zip(x, runs)]
        points = [(i, s) for i, s in points if s]
        if not points:
            continue
        xs = [i for i, _ in points]
        ax.plot(xs, [s["median"] for _, s in points], marker="o", color=colour, label=label, linewidth=1.5)
        ax.fill_between(xs, [s["min"] for _, s in points], [s["max"] for _, s in points], color=colour, alpha=0.15)
        flagged = [i for i, r in zip(x, runs) if (variant, "ttfo_s") in r.get("regressed", ())]
        if flagged:
            ax.scatter(flagged, [runs[i]["summaries"][variant]["ttfo_s"]["median"] for i in flagged], s=120,
                       facecolors="none", edgecolors="red", linewidths=2, zorder=5)
    ax.set_xticks(x, [f"{r['date'][:10]}\n{(r.get('commit') or '')[:7]}" for r in runs], fontsize=7)
    ax.set_ylabel("time to first output, s")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7, loc="upper left", ncol=3)
    ax.set_title(title + "  (red ring: regression)", fontsize=9)
    return _save(fig, path)


def versions(columns: Sequence[tuple[str, Mapping[str, Mapping[str, Mapping[str, float]]]]], title: str,
             path: str) -> str:
    """CANN (or torch) versions side by side: cold, warm and eager TTFO medians with min/max whiskers."""
    fig, ax = plt.subplots(figsize=(max(6.0, 1.8 * len(columns) + 2), 3.4))
    shown = [v for v in VARIANTS[:3]]
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
    ax.set_xticks(range(len(columns)), [name for name, _ in columns], fontsize=8)
    ax.set_ylabel("time to first output, s")
    ax.legend(fontsize=7)
    ax.set_title(title, fontsize=9)
    return _save(fig, path)


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
