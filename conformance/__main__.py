"""``python -m conformance clauses``: each SPEC clause with the tests that check it.

Exits 1 when a clause of sections 0-3 has no test or a test names a clause that SPEC does not define.
``--write-packaged`` regenerates ``conformance/SPEC_clauses.txt`` from SPEC.md.
"""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from conformance import clauses


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance")
    sub = parser.add_subparsers(dest="command", required=True)
    cmd = sub.add_parser("clauses", help="list SPEC clauses with their tests; exit 1 on a gap in sections 0-3")
    cmd.add_argument("--write-packaged", action="store_true", help="regenerate conformance/SPEC_clauses.txt")
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
