"""The Reliability table of docs/reliability.md, from the ``reliability(fault, outcome)`` marks of the tests that ran.

``python -m tests.reliability.report`` runs ``pytest tests -m reliability`` and ``pytest torchair_conformance -m
reliability``, each with this module as a plugin (``-p tests.reliability.report``), then prints the merged table,
the two pytest summary lines and the wall time; it exits non-zero when either run failed.

As a plugin it groups the tests by their mark's ``fault``, counts the cases each tried (its ``cases`` user property,
``record_property("cases", n)``, for properties that draw many examples; else 1), how the tests ended, and prints
the table after the run; ``--reliability-json PATH`` also writes the rows there.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pytest

MARK = "reliability"
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Row:
    """One fault: what the tests checked, where, how many cases they tried and how they ended."""

    fault: str
    outcome: str
    where: list[str] = field(default_factory=list)
    cases: int = 0
    passed: int = 0
    failed: int = 0
    skipped: list[str] = field(default_factory=list)

    def result(self) -> str:
        tests = self.passed + self.failed + len(self.skipped)
        if not tests:
            return "not run"
        if self.failed:
            return f"**{self.failed} of {tests} tests failed**"
        if self.skipped and not self.passed:
            return "skipped: " + "; ".join(sorted(set(self.skipped)))
        text = "passed"
        if self.skipped:
            text += f" ({len(self.skipped)} skipped: " + "; ".join(sorted(set(self.skipped))) + ")"
        return text


#: rows are grouped by the fault's first words, in the order of the issue that asked for them
GROUPS = ("Crash", "Damaged", "Stale", "Hostile", "No room", "No rights", "Race", "Bad input", "Export")


def _group(row: Row) -> int:
    return next((i for i, prefix in enumerate(GROUPS) if row.fault.startswith(prefix)), len(GROUPS))


def render(rows: list[Row]) -> str:
    """The Markdown table, one line per fault, grouped (GROUPS), then in the order the tests were collected."""
    lines = ["| Fault | Cases tried | Result | Outcome checked | Tests |", "| --- | ---: | --- | --- | --- |"]
    for row in sorted(rows, key=_group):
        where = ", ".join(f"`{w}`" for w in row.where)
        lines.append(f"| {row.fault} | {row.cases} | {row.result()} | {row.outcome} | {where} |")
    return "\n".join(lines)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--reliability-json", default=None, metavar="PATH", help="write the Reliability rows here")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_Table(config), "reliability-table")


class _Table:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.rows: dict[str, Row] = {}
        self.row_of: dict[str, Row] = {}

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            mark = item.get_closest_marker(MARK)
            if mark is None:
                continue
            if len(mark.args) != 2:
                raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.{MARK} takes (fault, outcome), got {mark.args}")
            fault, outcome = mark.args
            row = self.rows.setdefault(fault, Row(fault, outcome))
            try:
                where = str(item.path.relative_to(self.config.rootpath))
            except ValueError:
                where = item.path.name
            if where not in row.where:
                row.where.append(where)
            self.row_of[item.nodeid] = row

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        row = self.row_of.get(report.nodeid)
        if row is None:
            return
        if report.when == "setup" and report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            row.skipped.append(reason.removeprefix("Skipped: "))
        elif report.when == "call" or (report.when != "teardown" and report.failed):
            cases = dict(report.user_properties).get("cases", 1)
            if report.skipped:
                reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
                row.skipped.append(reason.removeprefix("Skipped: "))
                return
            row.cases += cases
            if report.passed:
                row.passed += 1
            else:
                row.failed += 1
        elif report.when == "teardown" and report.failed:
            row.failed += 1

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.rows:
            return
        terminalreporter.section("Reliability")
        terminalreporter.line(render(list(self.rows.values())))
        path = self.config.getoption("reliability_json")
        if path:
            Path(path).write_text(json.dumps([asdict(r) for r in self.rows.values()], indent=2) + "\n")


def _merge(parts: list[list[dict]]) -> list[Row]:
    rows: dict[str, Row] = {}
    for part in parts:
        for data in part:
            row = rows.setdefault(data["fault"], Row(data["fault"], data["outcome"]))
            row.where += [w for w in data["where"] if w not in row.where]
            row.cases += data["cases"]
            row.passed += data["passed"]
            row.failed += data["failed"]
            row.skipped += data["skipped"]
    return list(rows.values())


def main(argv: list[str]) -> int:
    """Run both reliability sets and print the merged table; extra arguments go to both pytest runs."""
    started = time.monotonic()
    parts, summaries, status = [], [], 0
    with tempfile.TemporaryDirectory(prefix="reliability-") as tmp:
        for suite in ("tests", "torchair_conformance"):
            out = os.path.join(tmp, f"{suite}.json")
            done = subprocess.run(
                [sys.executable, "-m", "pytest", suite, "-m", MARK, "-q", "-p", "tests.reliability.report",
                 f"--reliability-json={out}", *argv],
                cwd=ROOT, capture_output=True, text=True,
            )
            status = status or done.returncode
            lines = done.stdout.strip().splitlines()
            summaries.append(f"{suite}: {lines[-1] if lines else '(no output)'}")
            if done.returncode not in (0, 5):
                sys.stdout.write(done.stdout[-6000:] + done.stderr[-3000:])
            if os.path.exists(out):
                parts.append(json.loads(Path(out).read_text()))
    print(render(_merge(parts)))
    print()
    for line in summaries:
        print(line)
    print(f"wall time {time.monotonic() - started:.0f} s")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
