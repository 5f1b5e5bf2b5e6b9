"""The conformance matrix: clause x implementation/version, from the suite's JSON results.

Input: the documents the suite writes with `--conformance-json` (default `reports/conformance/*.json`): an object
whose `tests` list holds one record per test, `{"test": str, "clauses": [str], "outcome": "passed" | "failed" |
"skipped" | "xfailed" | "xpassed", "implementation": str, "versions": {...}}`.
A cell aggregates the tests that name the clause: `fail` if any failed, else `xpass` if a known divergence passed
(its entry is stale), else `pass` if any passed, else `xfail` (known divergence), else `skip`.
"""
from __future__ import annotations

import glob
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed")
#: cell status by precedence (the first outcome present wins)
_PRECEDENCE = (("failed", "fail"), ("xpassed", "xpass"), ("passed", "pass"), ("xfailed", "xfail"), ("skipped", "skip"))


class ResultsError(ValueError):
    """A results file that is not the suite's results document; the message names the file and the entry."""


@dataclass
class Matrix:
    clauses: list[str]
    columns: list[str]
    #: (clause, column) -> outcome counts
    cells: dict[tuple[str, str], Counter] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)

    def status(self, clause: str, column: str) -> str | None:
        """The cell's status (`fail`, `xpass`, `pass`, `xfail`, `skip`), or None where no test names the clause."""
        counts = self.cells.get((clause, column))
        if not counts:
            return None
        for outcome, status in _PRECEDENCE:
            if counts.get(outcome):
                return status
        return None

    def totals(self, column: str) -> Counter:
        total: Counter = Counter()
        for (_, col), counts in self.cells.items():
            if col == column:
                total.update(counts)
        return total


def column_label(impl: str, versions: dict[str, Any]) -> str:
    """`impl version · torch x · CANN y`: one column per implementation and version set."""
    parts = [f"{impl} {versions.get(impl) or ''}".strip()]
    for name in ("torch", "torch_npu", "cann"):
        if versions.get(name):
            parts.append(f"{'CANN' if name == 'cann' else name} {versions[name]}")
    return " · ".join(parts)


def clause_order(clause: str) -> tuple:
    """Clause IDs in SPEC order within a family: CC-2 before CC-10."""
    match = re.fullmatch(r"([A-Z]+)-(\d+)(.*)", clause)
    return (match.group(1), int(match.group(2)), match.group(3)) if match else (clause, 0, "")


def build(records: Iterable[dict[str, Any]], sources: list[str] | None = None) -> Matrix:
    cells: dict[tuple[str, str], Counter] = {}
    columns: list[str] = []
    clauses: set[str] = set()
    for record in records:
        column = column_label(str(record.get("implementation")), dict(record.get("versions") or {}))
        if column not in columns:
            columns.append(column)
        for clause in record.get("clauses") or []:
            clauses.add(clause)
            cells.setdefault((clause, column), Counter())[record["outcome"]] += 1
    return Matrix(sorted(clauses, key=clause_order), columns, cells, sources or [])


def load(pattern: str) -> Matrix:
    """The matrix of every results file matching `pattern` (an empty matrix when none does)."""
    records: list[dict[str, Any]] = []
    sources = sorted(glob.glob(pattern))
    for path in sources:
        with open(path, encoding="utf-8") as handle:
            try:
                data = json.load(handle)
            except ValueError as exc:
                raise ResultsError(f"{path}: not JSON: {exc}") from exc
        tests = data.get("tests") if isinstance(data, dict) else None
        if not isinstance(tests, list):
            raise ResultsError(f"{path}: expected the suite's results document (an object with a 'tests' list), "
                               f"found {type(data).__name__}; write it with pytest conformance --conformance-json")
        for i, record in enumerate(tests):
            if not isinstance(record, dict) or record.get("outcome") not in OUTCOMES or "test" not in record:
                raise ResultsError(f"{path} tests[{i}]: not a test record (test, clauses, outcome in {OUTCOMES}): "
                                   f"{record!r:.200}")
            records.append({**record, "implementation": record.get("implementation", data.get("implementation")),
                            "versions": record.get("versions", data.get("versions"))})
    return build(records, sources)
