"""`python -m conformance report`: render `reports/index.html` and `reports/README.md` from the history.

    python -m conformance report                    # re-render from reports/history/
    python -m conformance report --gate             # also exit 1 when the night is red (BE-4)

The night is red when a suite failed, errored or XPASSed, results are missing (`--require-results`) or older than
their implementation's latest benchmark run, or the performance gate fired (see `conformance.report.gate`).

Exit status: 0 rendered (and, with `--gate`, the night is green); 1 red with `--gate`; 2 a missing, empty or
unreadable history, results or accepted-changes file, or an `--out` folder holding files the report did not write
(`conformance.report.outdir`): then nothing under `--out` is touched.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from conformance.report import outdir

DEFAULT_HISTORY = os.path.join("reports", "history")
DEFAULT_OUT = "reports"
DEFAULT_RESULTS = os.path.join("reports", "conformance", "*.json")
DEFAULT_ACCEPTED = os.path.join("reports", "accepted-changes.json")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m conformance report", description=__doc__.split("\n\n")[0])
    p.add_argument("--history", default=DEFAULT_HISTORY, help=f"history folder (default {DEFAULT_HISTORY})")
    p.add_argument("--out", default=DEFAULT_OUT, help=f"output folder for index.html, README.md, charts/ "
                                                     f"(default {DEFAULT_OUT})")
    p.add_argument("--conformance", default=DEFAULT_RESULTS,
                   help=f"glob of the suite's JSON results for the matrix (default {DEFAULT_RESULTS})")
    p.add_argument("--accepted", default=DEFAULT_ACCEPTED,
                   help=f"reviewed file of accepted performance changes (default {DEFAULT_ACCEPTED}; may be absent)")
    p.add_argument("--threshold", type=float, default=1.10,
                   help="a regression: the median grew by more than THRESHOLD times (default 1.10)")
    p.add_argument("--alpha", type=float, default=0.01,
                   help="a regression: the rank test's one-sided p-value is below ALPHA (default 0.01)")
    p.add_argument("--require-results", action="append", default=[], metavar="IMPL",
                   help="the night is red when IMPL has no results document (repeatable)")
    p.add_argument("--source-url", default="../",
                   help="prefix of the links to a failing test's source (default ../, the repository beside reports/)")
    p.add_argument("--history-url", default=None,
                   help="prefix of the links to the full history files (default: --history relative to --out)")
    p.add_argument("--gate", action="store_true", help="exit 1 when the night is red")
    return p


def check_history(path: str) -> str | None:
    """Why `path` cannot be rendered from (missing, not a folder, no records), else None."""
    if not os.path.exists(path):
        return (f"history folder {path!r} does not exist; pass --history with the folder the benchmarks append to "
                f"(default {DEFAULT_HISTORY})")
    if not os.path.isdir(path):
        return f"--history {path!r} is a file, not a folder of *.jsonl files"
    files = sorted(Path(path).glob("*.jsonl"))
    if not any(f.stat().st_size for f in files):
        return (f"history folder {path!r} holds no records (no non-empty *.jsonl); run `python -m conformance bench` "
                f"first, or pass the right --history")
    return None


def main(argv: list[str] | None = None) -> int:
    """Entry point of `python -m conformance report`; returns the exit status."""
    args = parser().parse_args(argv)
    if args.threshold <= 1:
        print(f"error: --threshold must be above 1, got {args.threshold}", file=sys.stderr)
        return 2
    if not 0 < args.alpha < 1:
        print(f"error: --alpha must be between 0 and 1, got {args.alpha}", file=sys.stderr)
        return 2
    problem = check_history(args.history) or outdir.check(args.out)
    if problem:
        print(f"error: {problem}; the published report in {args.out} is left as it was", file=sys.stderr)
        return 2
    from conformance.report import gate, history, matrix, render

    try:
        records = history.load(args.history)
        results = matrix.load(args.conformance)
        accepted = gate.load_accepted(args.accepted)
    except (history.HistoryError, matrix.ResultsError, gate.AcceptedError, OSError) as exc:
        print(f"error: {exc}; the published report in {args.out} is left as it was", file=sys.stderr)
        return 2
    files = sorted(p.name for p in Path(args.history).glob("*.jsonl"))
    history_url = args.history_url
    if history_url is None:
        history_url = os.path.relpath(args.history, args.out).replace(os.sep, "/") + "/"
    report = render.build(records, results, threshold=args.threshold, alpha=args.alpha, history_files=files,
                          accepted=accepted, required=args.require_results, source_url=args.source_url,
                          history_url=history_url)
    try:
        with outdir.staging(args.out) as staged:
            render.write(report, staged)
            written = outdir.publish(staged, args.out)
    except (outdir.OutDirError, OSError) as exc:
        print(f"error: {exc}; the published report in {args.out} is left as it was", file=sys.stderr)
        return 2
    print(f"report: {len(report.series)} series, {len(records)} records, {len(results.columns)} results documents "
          f"-> {len(written)} files in {args.out}")
    for check in report.checks.checks:
        if check.status != "ok":
            print(f"gate: {check.status}: {check.figure.label} {check.value:.4g} vs {check.baseline:.4g} "
                  f"({check.baseline_label}) x{check.factor:.2f} p={check.p_value:.2g} run {check.run.run_id}"
                  + (f": {check.reason}" if check.reason else ""))
    for problem in report.verdict.problems:
        print(f"red: {problem}")
    print(f"verdict: {'green' if report.verdict.green else 'red'}")
    if args.gate and not report.verdict.green:
        print(f"gate: the night is red ({len(report.verdict.problems)} problem(s))", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
