"""The benchmark history: append-only JSONL under `reports/history/` (SPEC BE-3, BE-4).

Files: `cann-<version>.jsonl` for NPU runs (grouped by CANN version); off-NPU `<device>-torch-<version>.jsonl`.
Each line is one record, a JSON object (format `FORMAT`):

    {"format": 1, "run_id": str, "date": "YYYY-MM-DDTHH:MM:SSZ", "commit": str | null,
     "env": {"impl", "impl_version", "torch", "torch_npu", "cann", "device", "soc", "python", "host", "threads"},
     "bench": {"model", "method", "mode", "dynamic", "compiler", "ge_cache", "rounds"},
     "variant": "eager" | "impl-cold" | "impl-warm" | "inductor-prime" | "inductor-hot" | "aot-save" | "aot-load"
                | "overhead",
     "samples": [<one worker result per fresh process, see torchair_conformance.bench.worker>],
     "summary": {metric: {"median", "min", "max", "n"}},
     "skipped": str | null, "load_avg": {"start": [1, 5, 15 min], "end": [...], "cpus": int} | null}

(`load_avg.cpus`, the host's CPU count, is newer than the first records: a reader treats it as optional; `env`
may carry `machine`, what an NPU runner reports of itself: `npu-smi`, driver and firmware versions.)

A bench run appends one record per variant, all with the same `run_id`. Lines are only ever appended: a file is
opened in append mode, each record written whole with one `write` and flushed; nothing rewrites earlier lines.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from torchair_conformance.errors import ConformanceError
from torchair_conformance.report import versioned

FORMAT = 1

#: environment fields that identify a series (BE-4); host, date and commit vary between runs of one series
KEY_ENV = ("impl", "impl_version", "torch", "torch_npu", "cann", "device", "soc", "python", "threads")
#: bench fields that identify a series; the number of rounds does not change what is measured
KEY_BENCH = ("model", "method", "mode", "dynamic", "compiler", "ge_cache")


class HistoryError(ConformanceError, ValueError):
    """A history line that cannot be read; the message names the file and line."""


@dataclass
class Record:
    """One variant of one bench run."""

    run_id: str
    date: str
    commit: str | None
    env: dict[str, Any]
    bench: dict[str, Any]
    variant: str
    samples: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, dict[str, float]] = field(default_factory=dict)
    skipped: str | None = None
    #: the host's load averages (1, 5, 15 min) at the start and the end of the run, and its CPU count:
    #: {"start": [...], "end": [...], "cpus": int}
    load_avg: dict[str, Any] | None = None
    format: int = FORMAT

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Record:
        """A record of format `FORMAT` (required: the first records already carry it); raises ValueError."""
        versioned.check_format(data, FORMAT, what="a history record",
                               fix="append it with this checkout's `python -m torchair_conformance bench`, "
                                   "or render it with the checkout that wrote it")
        return cls(**versioned.known_fields(cls, data))

    def key(self) -> tuple:
        """BE-4: the series this record belongs to (environment and benchmark, not host/date/commit)."""
        return series_key(self.env, self.bench)

    def median(self, metric: str) -> float | None:
        value = self.summary.get(metric, {}).get("median")
        return float(value) if value is not None else None


def series_key(env: dict[str, Any], bench: dict[str, Any]) -> tuple:
    """The series' key; a nightly leg's image `variant` (two legs of one CANN and SoC) joins it where set."""
    variant = (("variant", env["variant"]),) if env.get("variant") else ()
    return tuple((k, env.get(k)) for k in KEY_ENV) + variant + tuple((k, bench.get(k)) for k in KEY_BENCH)


def file_name(env: dict[str, Any]) -> str:
    """BE-4: the history file of a record: by CANN version on NPU, by device and torch version elsewhere."""
    if env.get("cann"):
        name = f"cann-{env['cann']}"
    else:
        name = f"{env.get('device') or 'unknown'}-torch-{env.get('torch') or 'unknown'}"
    return re.sub(r"[^A-Za-z0-9._+-]", "_", name) + ".jsonl"


def append(directory: str | os.PathLike, records: Iterable[Record]) -> list[Path]:
    """BE-4: append records to their files (created as needed); returns the files written."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for record in records:
        path = directory / file_name(record.env)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(record.to_json() + "\n")
            handle.flush()
        if path not in written:
            written.append(path)
    return written


def read_file(path: str | os.PathLike) -> list[Record]:
    """The records of one history file, in its order; raises `HistoryError` naming the file (and the line)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise HistoryError(f"{path}: cannot be read: {exc}") from exc
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                records.append(Record.from_dict(json.loads(line)))
            except (ValueError, TypeError) as exc:
                raise HistoryError(f"{path}:{number}: not a history record: {exc}") from exc
    return records


def load(directory: str | os.PathLike) -> list[Record]:
    """Every record under `directory` (its `*.jsonl` files), oldest first; raises `HistoryError` on a bad line."""
    records = [record for path in sorted(Path(directory).glob("*.jsonl")) for record in read_file(path)]
    records.sort(key=lambda r: (r.date, r.run_id))
    return records
