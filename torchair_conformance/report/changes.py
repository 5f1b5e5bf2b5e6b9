"""Tests whose outcome changed between two results of one leg: since the previous night, or between CANN versions.

Part of the report's model (`model`; pure): a leg is a results column (`matrix.Column`), its tests' outcomes are
what `verdict.json` keeps for the next night (`outcomes`), and a change is named by its kind (`classify`).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from torchair_conformance.report import matrix as matrix_mod

#: outcomes that count as a skip when a test's change is named
_SKIPS = ("skipped",)


@dataclass(frozen=True)
class TestChange:
    """A test whose outcome differs between two results of one leg (`before` None: the test is new)."""

    column: str
    test: str
    before: str | None
    now: str | None
    kind: str  # "new failure" | "fixed" | "new skip" | "no longer skipped" | "new test" | "gone" | "changed"


@dataclass
class Changes:
    """What changed since the previous night's results, per leg; legs with no previous results are named."""

    tests: list[TestChange] = field(default_factory=list)
    new_legs: list[str] = field(default_factory=list)
    missing_legs: list[str] = field(default_factory=list)
    #: False when there were no previous results to compare with at all
    compared: bool = False


def outcomes(column: matrix_mod.Column) -> dict[str, str]:
    """A results column's tests as `test -> outcome` (the form `verdict.json` keeps for the next night)."""
    return {t.test: t.outcome for t in column.tests.values()}


def classify(before: str | None, now: str | None) -> str | None:
    """How a test's outcome changed (None: it did not)."""
    if before == now:
        return None
    if before is None:
        return "new failure" if now in matrix_mod.BAD_OUTCOMES else "new test"
    if now is None:
        return "gone"
    if now in matrix_mod.BAD_OUTCOMES:
        return "new failure"
    if before in matrix_mod.BAD_OUTCOMES:
        return "new skip" if now in _SKIPS else "fixed"
    if now in _SKIPS:
        return "new skip"
    if before in _SKIPS:
        return "no longer skipped"
    return "changed"


def diff(column: str, before: Mapping[str, str], now: Mapping[str, str]) -> list[TestChange]:
    """The tests of one leg whose outcome differs, new failures first."""
    order = ("new failure", "fixed", "new skip", "no longer skipped", "changed", "gone", "new test")
    out = []
    for test in sorted(set(before) | set(now)):
        kind = classify(before.get(test), now.get(test))
        if kind:
            out.append(TestChange(column, test, before.get(test), now.get(test), kind))
    return sorted(out, key=lambda c: order.index(c.kind))


def changes(matrix: matrix_mod.Matrix, previous: Mapping[str, Mapping[str, str]] | None,
            absent: Mapping[str, str] | None = None, missing: Iterable[str] = ()) -> Changes:
    """Per leg (results column, by label), the tests whose outcome changed since `previous`. `absent`: column label
    -> its leg's label, for the columns that did not run tonight (their old results are not compared); `missing`:
    the expected legs without tonight's results. Both are named in `missing_legs` (by leg), with the columns that
    had results last night and have none now."""
    absent = absent or {}
    out = Changes(compared=previous is not None)
    labels = set()
    for column in matrix.columns:
        if column.label in absent:
            continue
        labels.add(column.label)
        if previous is None:
            continue
        if column.label not in previous:
            out.new_legs.append(column.label)
            continue
        out.tests += diff(column.label, previous[column.label], outcomes(column))
    gone = [label for label in (previous or {}) if label not in labels and label not in absent]
    out.missing_legs = sorted(set(gone) | set(absent.values()) | set(missing))
    return out
