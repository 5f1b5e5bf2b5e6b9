"""`python -m torchair_conformance merge-history SRC... --into DIR`: fold the history files of several runners into one.

The nightly's fan-in job has one history folder per runner job (each the data branch's history plus that job's
new lines); this appends to `DIR/<file>.jsonl` every record of the same file name in a source whose (run id,
variant, series) is not in it yet, in the sources' order. Lines are only appended (BE-4); a bad line stops the merge
with its file and line named, before anything is written.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from torchair_conformance.report import history


def record_id(record: history.Record) -> tuple:
    return (record.run_id, record.variant, record.key())


def plan(sources: list[Path], into: Path) -> dict[str, list[str]]:
    """File name -> the lines to append to it (pure over the files' contents); raises `HistoryError`."""
    seen: dict[str, set[tuple]] = {}
    for path in sorted(into.glob("*.jsonl")) if into.is_dir() else []:
        seen[path.name] = {record_id(r) for r in history.read_file(path)}
    todo: dict[str, list[str]] = {}
    for source in sources:
        for path in sorted(source.glob("*.jsonl")):
            known = seen.setdefault(path.name, set())
            for record in history.read_file(path):
                if record_id(record) not in known:
                    known.add(record_id(record))
                    todo.setdefault(path.name, []).append(record.to_json())
    return todo


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m torchair_conformance merge-history",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("sources", nargs="+", type=Path, help="history folders to fold in")
    p.add_argument("--into", required=True, type=Path, help="the history folder to append to (created if absent)")
    args = p.parse_args(argv)
    missing = [str(s) for s in args.sources if not s.is_dir()]
    if missing:
        print(f"error: not history folders (missing, or not a folder): {', '.join(missing)}; nothing was merged",
              file=sys.stderr)
        return 2
    if args.into.exists() and not args.into.is_dir():
        print(f"error: --into {args.into} is a file, not a history folder; pass the folder of *.jsonl files to "
              f"append to (created if absent); nothing was merged", file=sys.stderr)
        return 2
    try:
        todo = plan(args.sources, args.into)
    except history.HistoryError as exc:
        print(f"error: {exc}; nothing was merged", file=sys.stderr)
        return 2
    if not todo:
        print(f"merge-history: nothing to add: {args.into} holds every record of "
              f"{', '.join(map(str, args.sources))} already")
        return 0
    for name, lines in todo.items():
        target = args.into / name
        try:
            args.into.mkdir(parents=True, exist_ok=True)
            with open(target, "a", encoding="utf-8") as handle:
                handle.write("".join(line + "\n" for line in lines))
        except OSError as exc:
            print(f"error: cannot append to {target}: {exc.strerror or exc}; the files named above were merged, "
                  f"the rest were not", file=sys.stderr)
            return 1
        print(f"merge-history: {len(lines)} record(s) appended to {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
