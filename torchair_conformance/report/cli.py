"""`python -m torchair_conformance report`: render `reports/index.html` and `reports/README.md` from the history.

    python -m torchair_conformance report                    # re-render from reports/history/
    python -m torchair_conformance report --gate             # also exit 1 when the night is red (BE-4)
    python -m torchair_conformance report --compare 8.1.RC1 8.2.RC1   # also two CANN versions side by side

The night is red when a suite failed, errored or XPASSed, an expected leg (SoC x CANN x torch-npu: `--expected-legs`,
else every leg that ran before less `--retired-legs`) has no results or benchmarks from tonight, `--require-results`
names an implementation without results from tonight, results are older than their environment's latest benchmark
run, or the performance gate fired (see `torchair_conformance.report.gate`, `torchair_conformance.report.verdict`).

Exit status: 0 rendered (and, with `--gate`, the night is green); 1 red with `--gate`; 2 a missing, empty or
unreadable history, results, accepted-changes or legs file, a `--conformance` glob that matches no file, or an
`--out` folder holding files the report did not write (`torchair_conformance.report.outdir`): then nothing under
`--out` is touched.
"""
from __future__ import annotations

import argparse
import glob
import os
import sys
from datetime import datetime, timezone
from pathlib import Path

from torchair_conformance.report import gate, outdir

DEFAULT_HISTORY = os.path.join("reports", "history")
DEFAULT_OUT = "reports"
DEFAULT_RESULTS = os.path.join("reports", "conformance", "*.json")
DEFAULT_ACCEPTED = os.path.join("reports", "accepted-changes.json")
DEFAULT_RETIRED = os.path.join("reports", "retired-legs.json")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m torchair_conformance report", description=__doc__.split("\n\n")[0])
    p.add_argument("--history", default=DEFAULT_HISTORY, help=f"history folder (default {DEFAULT_HISTORY})")
    p.add_argument("--out", default=DEFAULT_OUT, help=f"output folder for index.html, README.md, charts/ "
                                                     f"(default {DEFAULT_OUT})")
    p.add_argument("--conformance", default=DEFAULT_RESULTS,
                   help=f"glob of the suite's JSON results for the matrix (default {DEFAULT_RESULTS})")
    p.add_argument("--accepted", default=DEFAULT_ACCEPTED,
                   help=f"reviewed file of accepted performance changes (default {DEFAULT_ACCEPTED}; may be absent)")
    p.add_argument("--threshold", type=float, default=1 + gate.FLOOR,
                   help=f"the floor of a change: a figure grew by more than THRESHOLD times its baseline, whatever its "
                        f"noise (default {1 + gate.FLOOR:.2f})")
    p.add_argument("--sigmas", type=float, default=gate.SIGMAS,
                   help=f"a change exceeds SIGMAS times the baseline's own noise, a robust spread of its nights "
                        f"(default {gate.SIGMAS:g})")
    p.add_argument("--window", type=int, default=gate.WINDOW,
                   help=f"the normal nights a baseline is taken from (default {gate.WINDOW})")
    p.add_argument("--min-history", type=int, default=gate.MIN_HISTORY,
                   help=f"fewer baseline nights and a change is only suspected (default {gate.MIN_HISTORY})")
    p.add_argument("--require-results", action="append", default=[], metavar="IMPL",
                   help="the night is red when IMPL has no results document from tonight (repeatable)")
    p.add_argument("--expected-legs", metavar="FILE",
                   help="JSON list of tonight's legs ({soc, cann, torch_npu[, impl]}, the workflow matrix's); default: "
                        "every leg that ran before, less the retired ones")
    p.add_argument("--retired-legs", default=DEFAULT_RETIRED,
                   help=f"reviewed file of legs no longer expected (default {DEFAULT_RETIRED}; may be absent)")
    p.add_argument("--since", metavar="YYYY-MM-DDTHH:MM:SSZ",
                   help="when tonight began (default: 24 h before the newest benchmark run or results document)")
    p.add_argument("--source-url", default="../",
                   help="prefix of the links to a failing test's source (default ../, the repository beside reports/)")
    p.add_argument("--history-url", default=None,
                   help="prefix of the links to the full history files (default: --history relative to --out)")
    p.add_argument("--compare", nargs=2, metavar=("A", "B"), default=None,
                   help="also put CANN versions A and B side by side (figures and tests), e.g. 8.1.RC1 8.2.RC1")
    p.add_argument("--previous", default=None, metavar="VERDICT_JSON",
                   help="the previous night's verdict.json, for 'changed since last night' (default: the "
                        "verdict.json already in --out, when there is one)")
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
        return (f"history folder {path!r} holds no records (no non-empty *.jsonl); "
                f"run `python -m torchair_conformance bench` first, or pass the right --history")
    return None


def check_results(pattern: str) -> str | None:
    """Why the results pattern is unusable (it matches no file: a typo would otherwise judge nothing), else None."""
    if not glob.glob(pattern):
        return (f"--conformance {pattern!r} matches no results file; pass the glob of the suite's --conformance-json "
                f"documents (default {DEFAULT_RESULTS})")
    return None


def main(argv: list[str] | None = None) -> int:
    """Entry point of `python -m torchair_conformance report`; returns the exit status."""
    args = parser().parse_args(argv)
    if args.threshold <= 1:
        print(f"error: --threshold must be above 1, got {args.threshold}", file=sys.stderr)
        return 2
    if args.sigmas <= 0 or args.window < 1 or args.min_history < 1:
        print(f"error: --sigmas must be above 0 and --window and --min-history at least 1, got {args.sigmas}, "
              f"{args.window}, {args.min_history}", file=sys.stderr)
        return 2
    since = None
    if args.since is not None:
        try:
            since = datetime.strptime(args.since, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
        except ValueError:
            print(f"error: --since {args.since!r} is not a UTC time like 2026-03-04T17:00:00Z", file=sys.stderr)
            return 2
    if args.previous and not os.path.isfile(args.previous):
        print(f"error: --previous {args.previous!r} is not a file; pass the previous night's verdict.json, or leave "
              f"--previous out to use the one in --out", file=sys.stderr)
        return 2
    problem = check_history(args.history) or outdir.check(args.out)
    if problem:
        print(f"error: {problem}; the published report in {args.out} is left as it was", file=sys.stderr)
        return 2
    from torchair_conformance.report import (
        context,
        history,
        legs,
        matrix,
        model,
        outputs,
        render,
        results,
        verdict,
    )

    try:
        records = history.load(args.history)
        empty = check_results(args.conformance)
        if empty:
            raise results.ResultsError(empty)
        found = matrix.load(args.conformance)
        accepted = gate.load_accepted(args.accepted)
        night = verdict.Night(since=since, retired=legs.load_retired(args.retired_legs),
                              expected=legs.load_expected(args.expected_legs) if args.expected_legs else None,
                              required=tuple(args.require_results))
        previous = outputs.read_previous(args.previous or os.path.join(args.out, outputs.VERDICT_JSON))
    except (history.HistoryError, results.ResultsError, gate.AcceptedError, legs.LegsError, outputs.PreviousError,
            OSError) as exc:
        print(f"error: {exc}; the published report in {args.out} is left as it was", file=sys.stderr)
        return 2
    files = sorted(p.name for p in Path(args.history).glob("*.jsonl"))
    history_url = args.history_url
    if history_url is None:
        history_url = os.path.relpath(args.history, args.out).replace(os.sep, "/") + "/"
    try:
        rule = gate.Rule(floor=args.threshold - 1, sigmas=args.sigmas, window=args.window,
                         min_history=args.min_history)
        report = model.build(records, found, rule=rule, history_files=files,
                             accepted=accepted, night=night, previous=previous,
                             compare=tuple(args.compare) if args.compare else None)
    except ValueError as exc:
        print(f"error: {exc}; the published report in {args.out} is left as it was", file=sys.stderr)
        return 2
    try:
        with outdir.staging(args.out) as staged:
            render.write(report, staged, links=context.Links(args.source_url, history_url))
            written = outdir.publish(staged, args.out)
    except (outdir.OutDirError, OSError) as exc:
        print(f"error: {exc}; the published report in {args.out} is left as it was", file=sys.stderr)
        return 2
    print(f"report: {len(report.series)} series, {len(records)} records, {len(found.columns)} results documents "
          f"-> {len(written)} files in {args.out}")
    for check in report.checks.checks:
        if check.status != "ok":
            print(f"gate: {check.status}: {check.figure.label} {check.value:.4g} vs {check.baseline:.4g} "
                  f"({check.baseline_label}) x{check.factor:.2f} limit +{check.limit:.0%} run {check.run.run_id}"
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
