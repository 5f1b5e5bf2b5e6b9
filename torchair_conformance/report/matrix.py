"""The conformance matrix: clause x implementation/version, from the suite's JSON results.

Input: the documents the suite writes with `--conformance-json` (default `reports/conformance/*.json`), read by
`torchair_conformance.report.results` (their format is documented there). Every outcome is kept and shown: `passed`,
`failed`, `error` (setup or teardown), `skipped`, `xfailed` (known divergence), `xpassed` (a known divergence that
passed: fixed upstream), `xpassed_draw` (an `xpassed` record with `fixed_upstream: false`: a draw-dependent
divergence that did not show for this run's draws, no evidence of a fix), and any other string pytest may write one
day.

A column counts tests (a test naming two clauses counts once in the column's totals). A cell holds the tests that
name the clause; its status is the first of `fail` (failed or error), `xpass`, `pass`, `xfail`, `skip` present, and
a failed cell names its tests with their messages.
"""
from __future__ import annotations

import glob
import re
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from torchair_conformance.report import results

#: outcomes in display order; any other outcome string is kept and shown after these
OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed", "xpassed_draw")
#: outcomes that make a suite's verdict red
BAD_OUTCOMES = ("failed", "error", "xpassed")
#: cell status by precedence (the first outcome present wins)
_PRECEDENCE = (("failed", "fail"), ("error", "fail"), ("xpassed", "xpass"), ("passed", "pass"),
               ("xfailed", "xfail"), ("xpassed_draw", "xfail"), ("skipped", "skip"))


@dataclass(frozen=True)
class TestResult:
    """One test of one results document."""

    test: str
    outcome: str
    message: str | None = None
    #: IMPL-5: the exception the test raised ({"type", "message"}) and the known divergence it is listed under
    exception: dict[str, str] | None = None
    divergence: dict[str, Any] | None = None

    @property
    def source(self) -> str:
        """The test's file, relative to the repository root (`torchair_conformance/test_x.py`)."""
        return self.test.split("::", 1)[0]


@dataclass
class Column:
    """One results document: an implementation with its versions, run at a time."""

    label: str
    implementation: str
    versions: dict[str, Any]
    source: str
    finished: float | None = None
    exit_status: int | None = None
    tests: dict[str, TestResult] = field(default_factory=dict)

    @property
    def counts(self) -> Counter:
        """Outcome -> number of tests (each test once)."""
        return Counter(t.outcome for t in self.tests.values())

    @property
    def bad(self) -> list[TestResult]:
        """The tests that make the verdict red: failed, error, xpassed."""
        return [t for t in self.tests.values() if t.outcome in BAD_OUTCOMES]

    @property
    def finished_iso(self) -> str | None:
        if self.finished is None:
            return None
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.finished))


@dataclass
class Matrix:
    clauses: list[str]
    columns: list[Column]
    #: (clause, column label) -> the tests naming the clause
    cells: dict[tuple[str, str], list[TestResult]] = field(default_factory=dict)

    @property
    def sources(self) -> list[str]:
        return [c.source for c in self.columns]

    def status(self, clause: str, column: str) -> str | None:
        """The cell's status (`fail`, `xpass`, `pass`, `xfail`, `skip`, or an unknown outcome as written), or None
        where no test names the clause."""
        tests = self.cells.get((clause, column))
        if not tests:
            return None
        present = {t.outcome for t in tests}
        for outcome, status in _PRECEDENCE:
            if outcome in present:
                return status
        return sorted(present)[0]

    def cell_counts(self, clause: str, column: str) -> Counter:
        return Counter(t.outcome for t in self.cells.get((clause, column), []))

    def totals(self, column: str) -> Counter:
        """Outcome -> number of tests in the column (tests, not clause x test pairs)."""
        for c in self.columns:
            if c.label == column:
                return c.counts
        return Counter()


def outcome_order(outcome: str) -> tuple[int, str]:
    return (OUTCOMES.index(outcome) if outcome in OUTCOMES else len(OUTCOMES), outcome)


def column_label(impl: str, versions: dict[str, Any]) -> str:
    """`impl version · torch x · CANN y · SoC`: one column per implementation and version set."""
    parts = [f"{impl} {versions.get(impl) or ''}".strip()]
    for name, title in (("torch", "torch"), ("torch_npu", "torch_npu"), ("cann", "CANN")):
        if versions.get(name):
            parts.append(f"{title} {versions[name]}")
    for name in ("soc", "variant"):
        if versions.get(name):
            parts.append(str(versions[name]))
    return " · ".join(parts)


def clause_order(clause: str) -> tuple:
    """Clause IDs in SPEC order within a family: CC-2 before CC-10."""
    match = re.fullmatch(r"([A-Z]+)-(\d+)(.*)", clause)
    return (match.group(1), int(match.group(2)), match.group(3)) if match else (clause, 0, "")


def build(documents: Iterable[tuple[str, results.Document]]) -> Matrix:
    """The matrix of `(source, document)` pairs, one column per document (two documents with the same label
    are told apart by their source)."""
    cells: dict[tuple[str, str], list[TestResult]] = {}
    columns: list[Column] = []
    clauses: set[str] = set()
    for source, document in documents:
        impl = str(document.implementation)
        label = column_label(impl, document.versions)
        if document.label:  # IMPL-4: what ran, e.g. upstream's Python with graphs on the project's GE executor
            label = f"{label} ({document.label})"
        if any(c.label == label for c in columns):
            label = f"{label} ({source.rsplit('/', 1)[-1]})"
        column = Column(label, impl, dict(document.versions), source, document.finished, document.exit_status)
        columns.append(column)
        for record in document.tests:
            outcome = record.outcome
            if outcome == "xpassed" and record.fixed_upstream is False:
                outcome = "xpassed_draw"
            result = TestResult(record.test, outcome, record.message, record.exception, record.divergence)
            column.tests[result.test] = result
            for clause in record.clauses:
                clauses.add(clause)
                cells.setdefault((clause, label), []).append(result)
    return Matrix(sorted(clauses, key=clause_order), columns, cells)


def load(pattern: str) -> Matrix:
    """The matrix of every results file matching `pattern` (an empty matrix when none does); raises
    `results.ResultsError` naming a file that is not a results document."""
    return build((path, results.read(path)) for path in sorted(glob.glob(pattern)))
