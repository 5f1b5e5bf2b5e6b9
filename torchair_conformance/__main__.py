"""``python -m torchair_conformance clauses|bench|report|nightly``.

- ``clauses``: each SPEC clause with the tests that check it; exits 1 when a clause of sections 0-4 has no test or
  a test names a clause that SPEC does not define. ``--write-packaged`` regenerates
  ``torchair_conformance/SPEC_clauses.txt``.
- ``bench``: cold versus warm start in fresh processes (``torchair_conformance.bench.cli``; ``bench --help``).
- ``report``: renders ``reports/`` from the history and the suite's JSON results (``torchair_conformance.report.cli``).
- ``nightly``: suite, benchmarks, history, report, and one exit status that is red when any of it is
  (``torchair_conformance.nightly``).
- ``merge-history``: fold the history folders of several runner jobs into one (``torchair_conformance.report.merge``).
"""

from __future__ import annotations

import argparse
import sys

from torchair_conformance import clauses


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("bench", "report", "nightly", "merge-history"):
        # Each has its own parser; they are imported only when asked for (the report needs matplotlib).
        if argv[0] == "bench":
            from torchair_conformance.bench.cli import main as command
        elif argv[0] == "report":
            from torchair_conformance.report.cli import main as command
        elif argv[0] == "merge-history":
            from torchair_conformance.report.merge import main as command
        else:
            from torchair_conformance.nightly import main as command
        return command(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m torchair_conformance")
    sub = parser.add_subparsers(dest="command", required=True)
    cmd = sub.add_parser("clauses", help="list SPEC clauses with their tests; exit 1 on a gap in sections 0-4")
    cmd.add_argument("--write-packaged", action="store_true", help="regenerate torchair_conformance/SPEC_clauses.txt")
    sub.add_parser("bench", help="cold vs warm start benchmarks (see: bench --help)")
    sub.add_parser("report", help="render reports/ from the history and conformance results (see: report --help)")
    sub.add_parser("nightly", help="suite, benchmarks, report; exit 1 when any is red (see: nightly --help)")
    sub.add_parser("merge-history", help="fold runners' history folders into one (see: merge-history --help)")
    args = parser.parse_args(argv)

    found, source = clauses.load_clauses()
    if args.write_packaged:
        if source == str(clauses.PACKAGED):
            print("no SPEC.md found (set $TORCHAIR_SPEC): nothing to regenerate from", file=sys.stderr)
            return 2
        clauses.PACKAGED.write_text(clauses.render_packaged(found), encoding="utf-8")
        print(f"wrote {len(found)} clauses from {source} to {clauses.PACKAGED}")
        return 0
    report, gaps, unknown = clauses.coverage_report(found, clauses.tests_by_clause())
    print(f"clauses from {source}")
    print(report)
    if unknown:
        print(f"tests name clauses that SPEC does not define: {', '.join(unknown)}")
    if gaps:
        print(f"clauses of sections {clauses.CHECKED_SECTIONS} with no test: {', '.join(gaps)}")
    else:
        print(f"every clause of sections {clauses.CHECKED_SECTIONS} has a test")
    return 1 if gaps or unknown else 0


if __name__ == "__main__":
    sys.exit(main())
