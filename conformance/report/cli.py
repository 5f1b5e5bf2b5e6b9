"""`python -m conformance report`: render `reports/index.html` and `reports/README.md` from the history.

    python -m conformance report                    # re-render from reports/history/
    python -m conformance report --gate             # also exit 1 when a series' latest run regressed (BE-4)

Exit status: 0 rendered (and, with `--gate`, no regression in any series' latest run); 1 regression with `--gate`;
2 unreadable history or results.
"""
from __future__ import annotations

import argparse
import os
import sys

DEFAULT_HISTORY = os.path.join("reports", "history")
DEFAULT_OUT = "reports"
DEFAULT_RESULTS = os.path.join("reports", "conformance", "*.json")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m conformance report", description=__doc__.split("\n\n")[0])
    p.add_argument("--history", default=DEFAULT_HISTORY, help=f"history folder (default {DEFAULT_HISTORY})")
    p.add_argument("--out", default=DEFAULT_OUT, help=f"output folder for index.html, README.md, charts/ "
                                                     f"(default {DEFAULT_OUT})")
    p.add_argument("--conformance", default=DEFAULT_RESULTS,
                   help=f"glob of the suite's JSON results for the matrix (default {DEFAULT_RESULTS})")
    p.add_argument("--threshold", type=float, default=1.25,
                   help="regression: a median above THRESHOLD x the earlier runs' median (default 1.25)")
    p.add_argument("--gate", action="store_true", help="exit 1 when the latest run of a series regressed")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of `python -m conformance report`; returns the exit status."""
    from conformance.report import history, matrix, render, stats

    args = parser().parse_args(argv)
    if args.threshold <= 1:
        print(f"error: --threshold must be above 1, got {args.threshold}", file=sys.stderr)
        return 2
    try:
        records = history.load(args.history)
        results = matrix.load(args.conformance)
    except (history.HistoryError, matrix.ResultsError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    files = sorted(os.path.basename(p) for p in os.listdir(args.history) if p.endswith(".jsonl")) \
        if os.path.isdir(args.history) else []
    report = render.build(records, results, threshold=args.threshold, history_files=files)
    written = render.write(report, args.out)
    print(f"report: {len(report.series)} series, {len(records)} records -> {len(written)} files in {args.out}")
    latest = stats.regressions(records, threshold=args.threshold, latest_only=True)
    for g in latest:
        print(f"regression: {g.variant} {g.metric} {g.value:.6g} s vs earlier median {g.baseline:.6g} s "
              f"(x{g.factor:.2f}, run {g.run_id})")
    if args.gate and latest:
        print(f"gate: {len(latest)} regression(s) in the latest runs", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
