"""The report's table of known divergences (SPEC IMPL-5): per results document, every test listed under a known
divergence, with the failure its entry expects, the wheel's file:line, the exception that actually happened, and
the entry's evidence (`observed` in a run, `random`: the divergence itself is random, `code reading`: no run has
shown it, e.g. it needs an NPU)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from torchair_conformance.report import matrix as matrix_mod

__all__ = ["divergence_rows", "actual_text"]

#: what each outcome of a listed test says about its entry
_VERDICT = {"xfailed": "failed as listed", "xpassed": "passed: fixed upstream, remove the entry",
            "xpassed_draw": "passed for this run's draws (random divergence)", "skipped": "not run here",
            "failed": "failed another way than listed", "error": "failed another way than listed"}


def actual_text(result: matrix_mod.TestResult) -> str:
    """``Type: message`` of the exception the test raised, or "–" when it raised none (passed, skipped)."""
    exc = result.exception
    if not exc:
        return "–"
    return f"{exc.get('type', '?')}: {exc.get('message', '')}".strip()


def divergence_rows(columns: Sequence[matrix_mod.Column], source_prefix: str) -> list[dict[str, Any]]:
    """One group per column holding listed tests: ``{"column", "rows": [{test, href, outcome, verdict, evidence,
    expected, where, actual, reason}]}``; columns without listed tests are left out."""
    groups = []
    for column in columns:
        rows = []
        for result in sorted(column.tests.values(), key=lambda r: r.test):
            entry = result.divergence
            if not entry:
                continue
            rows.append({"test": result.test, "href": source_prefix + result.source, "outcome": result.outcome,
                         "verdict": _VERDICT.get(result.outcome, result.outcome),
                         "evidence": str(entry.get("evidence", "observed")), "expected": str(entry.get("expected", "")),
                         "where": str(entry.get("where", "")), "reason": str(entry.get("reason", "")),
                         "actual": actual_text(result)})
        if rows:
            groups.append({"column": column.label, "rows": rows})
    return groups
