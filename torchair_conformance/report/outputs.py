"""The night's verdict for machines: `verdict.json`, JUnit XML (a check on GitHub) and the step summary (BE-4).

`verdict.json` (format `FORMAT`) is also what the next night's report compares with ("changed since last night"):

    {"format": 1, "verdict": "green" | "red", "nothing_checked": bool, "performance": "checked" | "not checked",
     "problems": [str], "latest_run": {"date": str | null, "commit": str | null},
     "checked": {"results": int, "tests": int, "series": int, "gate_checks": int, "not_gated": int, "accepted": int,
                 "suspected": int, "figures": [str]},
     "savings": [{"series": str, "cold_ttfo_s": float | null, "warm_ttfo_s": float | null, "factor": float | null,
                  "previous": {"date": str, "cold_ttfo_s": float | null, "warm_ttfo_s": float | null} | null}],
     "regressions": [{"series": str, "figure": str, "status": "regression" | "suspected" | "accepted",
                      "checks": [{"figure", "kind", "value", "baseline", "baseline_label", "factor", "noise",
                                  "limit", "nights", "status", "reason", "unit": "ratio"}]}],
     "changes": {"compared": bool, "tests": [{"leg", "test", "before", "now", "kind"}], "new_legs": [str],
                 "missing_legs": [str]},
     "legs": [{"label", "implementation", "versions", "source", "finished", "stale", "current": bool,
               "absent": "last ran ..." | null, "counts": {outcome: n}, "tests": {test id: outcome}}]}

`changes.missing_legs` names the legs that did not run tonight: an expected leg without tonight's results, a leg
whose results are from an earlier night, a leg with results last night and none now. Their old results stay in
`legs` with `current: false` and count in no figure of the night.

The JUnit file holds one test suite per results document (one case per test), one for the gate (one case per
check) and one case for the verdict itself, which fails with every problem when the night is red.
"""
from __future__ import annotations

import json
import math
import os
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from torchair_conformance.errors import ConformanceError
from torchair_conformance.report import changes as changes_mod
from torchair_conformance.report import gate, model, results, units, versioned
from torchair_conformance.report import matrix as matrix_mod

FORMAT = 1
VERDICT_JSON = "verdict.json"
JUNIT_XML = "verdict-junit.xml"
#: the environment variable GitHub Actions names the step summary file with
STEP_SUMMARY_VAR = "GITHUB_STEP_SUMMARY"


class PreviousError(ConformanceError, ValueError):
    """The previous night's `verdict.json` cannot be read; the message names the file."""


def _number(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else round(value, 6)


def _check(check: Any) -> dict[str, Any]:
    return {"figure": check.figure.label, "kind": check.kind, "value": _number(check.value),
            "baseline": _number(check.baseline), "baseline_label": check.baseline_label,
            "factor": _number(check.factor), "noise": _number(check.noise), "limit": _number(check.limit),
            "nights": check.nights, "status": check.status, "reason": check.reason, "unit": "ratio"}


def verdict_document(report: model.Report) -> dict[str, Any]:
    """BE-4: the night as JSON (the format in this module's docstring)."""
    latest = report.latest
    checks = report.checks.checks
    return {
        "format": FORMAT, "verdict": "green" if report.verdict.green else "red",
        "nothing_checked": report.nothing_checked,
        "performance": "checked" if report.performance_checked else "not checked",
        "problems": list(report.verdict.problems),
        "latest_run": {"date": latest.date if latest else None, "commit": latest.commit if latest else None},
        "checked": {"results": len(report.current_columns),
                    "tests": sum(len(c.tests) for c in report.current_columns), "series": len(report.savings),
                    "gate_checks": len(checks), "not_gated": sum(c.status == "not gated" for c in checks),
                    "accepted": sum(c.status == "accepted" for c in checks),
                    "suspected": sum(c.status == "suspected" for c in checks), "figures": figures_checked(report)},
        "savings": [{"series": s.series.title, "cold_ttfo_s": _number(s.cold), "warm_ttfo_s": _number(s.warm),
                     "factor": _number(s.factor),
                     "previous": {"date": s.previous.date, "cold_ttfo_s": _number(s.before("impl-cold")),
                                  "warm_ttfo_s": _number(s.before("impl-warm"))} if s.previous else None}
                    for s in report.savings],
        "regressions": [{"series": r.series.title, "figure": r.label, "status": r.status,
                         "checks": [_check(c) for c in r.checks]} for r in report.regressions],
        "changes": {"compared": report.changes.compared,
                    "tests": [{"leg": c.column, "test": c.test, "before": c.before, "now": c.now, "kind": c.kind}
                              for c in report.changes.tests],
                    "new_legs": report.changes.new_legs, "missing_legs": report.changes.missing_legs},
        "legs": [{"label": c.label, "implementation": c.implementation, "versions": c.versions, "source": c.source,
                  "finished": c.finished_iso, "stale": report.verdict.stale.get(c.label),
                  "current": report.verdict.current(c), "absent": report.verdict.absent.get(c.label),
                  "counts": dict(c.counts), "tests": changes_mod.outcomes(c)} for c in report.matrix.columns],
    }


def read_previous(path: str | os.PathLike) -> dict[str, dict[str, str]] | None:
    """The previous night's outcomes by leg label from its `verdict.json` (None when there is no such file)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise PreviousError(f"{path}: not a readable verdict.json: {exc}") from exc
    try:
        versioned.check_format(data, FORMAT, what="a verdict.json",
                               fix="pass --previous with a previous night's verdict.json written by this "
                                   "checkout's report")
    except ValueError as exc:
        raise PreviousError(f"{path}: {exc}") from exc
    legs = data.get("legs")
    if not isinstance(legs, list) or not all(isinstance(leg, dict) and isinstance(leg.get("label"), str)
                                             and isinstance(leg.get("tests"), dict) for leg in legs):
        raise PreviousError(f"{path}: not a verdict.json of format {FORMAT} (a 'legs' list of objects with "
                            f"'label' and 'tests'); pass --previous with the previous night's verdict.json")
    return {leg["label"]: {results.test_id(str(k)): str(v) for k, v in leg["tests"].items()} for leg in legs}


def figures_checked(report: model.Report) -> list[str]:
    """The gate's figures that were compared with a baseline tonight."""
    judged = {c.figure.key for c in report.checks.judged}
    return [f.label for f in gate.FIGURES if f.key in judged]


def performance_text(report: model.Report) -> str:
    """What the gate checked tonight, or why it checked nothing."""
    figures = figures_checked(report)
    unchecked = len(report.checks.unchecked)
    if figures:
        series = len({c.series for c in report.checks.judged})
        rest = f"; {unchecked} series not checked (no earlier night to compare with)" if unchecked else ""
        return f"performance checked on {series} series: {', '.join(figures)}{rest}"
    reasons = sorted({c.reason for c in report.checks.checks if c.reason})
    why = "; ".join(reasons[:3]) if reasons else "no series has a run tonight with a baseline to compare with"
    return f"performance not checked ({why})"


def headline(report: model.Report) -> str:
    """The verdict in words, never "green" over nothing checked: "not checked" where the gate compared nothing."""
    if report.verdict.green and report.nothing_checked:
        return "nothing was checked: no results from tonight and no benchmark compared with a baseline"
    if report.verdict.green and not report.performance_checked:
        return "conformance green; performance not checked"
    suspected = sum(r.status == "suspected" for r in report.regressions)
    if report.verdict.green and suspected:
        return f"green: nothing broke; {suspected} figure(s) suspected slower, not confirmed"
    if report.verdict.green:
        return "green: nothing broke, nothing got slower"
    slower = sum(r.status == "regression" for r in report.regressions)
    others = [p for p in report.verdict.problems if not p.startswith("gate: ")]
    parts = ([f"{len(others)} problem(s)"] if others else []) + ([f"{slower} figure(s) slower"] if slower else [])
    return "red: " + ", ".join(parts or [f"{len(report.verdict.problems)} problem(s)"])


def checked(report: model.Report) -> str:
    """What the verdict rests on, in one line."""
    checks = report.checks.checks
    columns = report.current_columns
    tests = sum(len(c.tests) for c in columns)
    absent = len(report.matrix.columns) - len(columns)
    older = f", {absent} from earlier nights not counted" if absent else ""
    return (f"{len(columns)} results document(s) from tonight ({tests} tests{older}); {len(report.savings)} benchmark "
            f"series in the latest night ({len(checks)} gate checks: {len(report.checks.fired)} regression(s), "
            f"{sum(c.status == 'suspected' for c in checks)} suspected, "
            f"{sum(c.status == 'not gated' for c in checks)} not gated, "
            f"{sum(c.status == 'accepted' for c in checks)} accepted); {performance_text(report)}")


def saving_text(saving: model.Saving) -> str:
    """`cold 36.90 s → warm 6.81 s: ×5.4 faster, 30.09 s saved a start` (time to first output)."""
    text = f"cold {units.seconds(saving.cold)} → warm {units.seconds(saving.warm)}"
    if saving.factor:
        text += f": ×{saving.factor:.1f} faster, {units.seconds(saving.cold - saving.warm)} saved a start"
    return text


def since_text(saving: model.Saving) -> str:
    """`since 2026-03-03: warm +60.0 ms (+1%), cold −0.20 s (−1%)`, or why there is nothing to compare."""
    if saving.previous is None:
        return "first run of this series"
    return (f"since {saving.previous.date[:10]}: warm {units.change(saving.warm, saving.before('impl-warm'))}, "
            f"cold {units.change(saving.cold, saving.before('impl-cold'))}")


def check_text(check: Any) -> str:
    """One check of a slowed figure: `suspected: vs 12 earlier night(s) of this series: 0.0082 → 0.0103, ×1.25
    (noise ±2.1%, limit +10%): +25% on its first night: ...`."""
    return (f"{check.status}: vs {check.baseline_label}: {check.baseline:.3g} → {check.value:.3g}, ×{check.factor:.2f} "
            f"(noise ±{check.noise:.1%}, limit +{check.limit:.0%})" + (f": {check.reason}" if check.reason else ""))


def step_summary(report: model.Report) -> str:
    """The GitHub step summary: the banner's answers in Markdown."""
    lines = [f"### Nightly: {headline(report)}", "", f"Checked: {checked(report)}.", ""]
    if report.changes.missing_legs:
        lines += [f"Did not run tonight: {'; '.join(report.changes.missing_legs)}.", ""]
    lines += [f"- **{s.series.short}**: {saving_text(s)}; {since_text(s)}" for s in report.savings]
    if report.regressions:
        lines += ["", "**Slower:**"]
        for r in report.regressions:
            lines.append(f"- {r.status}: {r.label}, {r.series.short}")
            lines += [f"  - {check_text(c)}" for c in r.checks]
    other = [p for p in report.verdict.problems if not p.startswith("gate: ")]
    if other:
        lines += ["", "**Problems:**"] + [f"- {p}" for p in other]
    if report.changes.tests:
        lines += ["", "**Changed since last night:**"]
        lines += [f"- {c.kind}: `{c.test}` ({c.before or 'absent'} → {c.now or 'absent'}) [{c.column}]"
                  for c in report.changes.tests]
    return "\n".join(lines) + "\n"


def junit(report: model.Report) -> str:
    """JUnit XML of the night: each results document's tests, the gate's checks, and the verdict."""
    root = ET.Element("testsuites", name="torchair-conformance nightly")
    for column in report.current_columns:
        suite = ET.SubElement(root, "testsuite", name=f"conformance: {column.label}", tests=str(len(column.tests)))
        for test in column.tests.values():
            case = ET.SubElement(suite, "testcase", classname=test.source, name=test.test)
            if test.outcome in matrix_mod.BAD_OUTCOMES:
                kind = "error" if test.outcome == "error" else "failure"
                ET.SubElement(case, kind, message=test.outcome).text = test.message or test.outcome
            elif test.outcome not in ("passed",):
                ET.SubElement(case, "skipped", message=f"{test.outcome}: {test.message or ''}".strip(": "))
    gate_suite = ET.SubElement(root, "testsuite", name="benchmark gate", tests=str(len(report.checks.checks)))
    titles = {s.key: s.short for s in report.series}
    for check in report.checks.checks:
        case = ET.SubElement(gate_suite, "testcase", classname=titles.get(check.series, "?"),
                             name=f"{check.figure.label} vs {check.baseline_label}")
        if check.fired:
            ET.SubElement(case, "failure", message="regression").text = check_text(check)
        elif check.status != "ok":
            ET.SubElement(case, "skipped", message=f"{check.status}: {check.reason}")
    verdict_suite = ET.SubElement(root, "testsuite", name="verdict", tests="1")
    case = ET.SubElement(verdict_suite, "testcase", classname="nightly", name="the night is green")
    if not report.verdict.green:
        ET.SubElement(case, "failure", message=headline(report)).text = "\n".join(report.verdict.problems)
    elif report.nothing_checked:
        ET.SubElement(case, "skipped", message=headline(report))
    for suite in root:
        suite.set("failures", str(sum(1 for c in suite for e in c if e.tag == "failure")))
        suite.set("errors", str(sum(1 for c in suite for e in c if e.tag == "error")))
        suite.set("skipped", str(sum(1 for c in suite for e in c if e.tag == "skipped")))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write(report: model.Report, folder: Path) -> list[Path]:
    """Write `verdict.json` and the JUnit file into `folder`; returns them."""
    paths = [folder / VERDICT_JSON, folder / JUNIT_XML]
    paths[0].write_text(json.dumps(verdict_document(report), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    paths[1].write_text(junit(report), encoding="utf-8")
    return paths


def append_step_summary(report: model.Report, environ: Mapping[str, str] | None = None) -> str | None:
    """Append the step summary to `$GITHUB_STEP_SUMMARY` when it is set (GitHub Actions); returns that path."""
    environ = os.environ if environ is None else environ
    path = environ.get(STEP_SUMMARY_VAR)
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(step_summary(report))
    return path or None
