"""Figures as the report writes them: seconds with their unit, changes with their unit and their factor (pure)."""
from __future__ import annotations

from collections.abc import Mapping


def seconds(value: float | None) -> str:
    """`1.04 s`, `300.0 ms`, `1.2 µs`; `–` for no value."""
    if value is None:
        return "–"
    if abs(value) >= 1:
        return f"{value:.2f} s"
    if abs(value) >= 1e-3:
        return f"{value * 1e3:.1f} ms"
    return f"{value * 1e6:.1f} µs"


def signed_seconds(value: float) -> str:
    """A change in seconds with its sign: `+60.0 ms`, `−0.20 s`."""
    return ("+" if value >= 0 else "−") + seconds(abs(value))


def change(now: float | None, before: float | None) -> str:
    """`+60.0 ms (+20%)`: the change from `before` to `now`, with its unit and relative size; `–` without both."""
    if now is None or before is None:
        return "–"
    relative = f" ({now / before - 1:+.1%})".replace("-", "−") if before else ""
    return signed_seconds(now - before) + relative


def spread(summary: Mapping[str, float] | None) -> str:
    """`median [min–max]`."""
    if not summary:
        return "–"
    return f"{seconds(summary['median'])} [{seconds(summary['min'])}–{seconds(summary['max'])}]"


def nbytes(summary: Mapping[str, float] | None) -> str:
    """A byte count's median with a binary unit."""
    if not summary or summary.get("median") is None:
        return "–"
    value = summary["median"]
    for unit in ("B", "KiB", "MiB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"
