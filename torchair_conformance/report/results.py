"""The suite's results document: what `pytest torchair_conformance --conformance-json PATH` writes and the report reads.

One JSON object per session (format `FORMAT`), one record per test:

    {"format": 1, "implementation": str, "label": str | null, "device": str | null, "versions": {name: version},
     "capabilities": [str], "profile": str | null, "selected_clauses": [str], "python": str | null,
     "host": str | null, "started": float | null, "finished": float | null, "exit_status": int | null,
     "divergence_file": str | null, "stale_divergences": [str], "fixed_upstream": [str],
     "tests": [{"test": str, "outcome": str, "clauses": [str], "phase": str | null, "duration_s": float | null,
                "implementation": str | null, "device": str | null, "versions": {...}, "profile": str | null,
                "message": str | null, "fixed_upstream": bool | null,
                "exception": {"type": str, "message": str} | null,
                "divergence": {"clause": str, "expected": str, "where": str, "reason": str, "evidence": str,
                               "line": int} | null}]}

`outcome` is pytest's (`passed`, `failed`, `skipped`) or the suite's (`error`: setup or teardown failed; `xfailed`:
a known divergence; `xpassed`: a known divergence that passed, `fixed_upstream` false when it shows only for some
draws). `exception` is what a failed or xfailed test raised, `divergence` the known-divergence entry it is listed
under (SPEC IMPL-5: an xfail's `exception` matches the entry's `expected`). Only `tests` with each record's `test`
and `outcome` is required: the report's test samples hold no more.

A document without `format` is format 1: the suite wrote exactly this layout before it named its format, and such
documents live on where this checkout cannot rewrite them (the nightly's data branch, runners on older checkouts).
This module alone writes (`write`) and reads (`read`) the document; `Document` and `TestRecord` are its typed form.

A test is named by its pytest node id, which starts with the suite's folder. Before 0.2 the suite was the package
`conformance`; `test_id` reads such names as today's, so a night after the rename compares like with like.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from torchair_conformance.errors import ConformanceError
from torchair_conformance.report import cann, versioned

FORMAT = 1
#: what to do with a document this reader cannot read
_FIX = ("write it again with this checkout (pytest torchair_conformance --conformance-json PATH), or render it "
        "with the checkout that wrote it")


#: the suite's folder in node ids before it was renamed to torchair_conformance (issue 23)
_LEGACY_FOLDER = "conformance/"


def test_id(name: str) -> str:
    """A test's node id as this suite names it, also when a document written before the rename holds it."""
    return "torchair_conformance/" + name[len(_LEGACY_FOLDER):] if name.startswith(_LEGACY_FOLDER) else name


class ResultsError(ConformanceError, ValueError):
    """A results file that is not the suite's results document; the message names the file and the entry."""


@dataclass
class TestRecord:
    """One test of one session: its clauses, its outcome and, for a failure or a divergence, why."""

    test: str
    outcome: str
    clauses: list[str] = field(default_factory=list)
    #: the pytest phase that decided the outcome: `setup`, `call` or `teardown`
    phase: str | None = None
    duration_s: float | None = None
    implementation: str | None = None
    device: str | None = None
    versions: dict[str, Any] = field(default_factory=dict)
    profile: str | None = None
    message: str | None = None
    #: for `xpassed`: True when the divergence is fixed, False when it shows only for some draws
    fixed_upstream: bool | None = None
    #: IMPL-5: the exception a failed or xfailed test raised: {"type": module.Class, "message": trimmed}
    exception: dict[str, str] | None = None
    #: IMPL-5: the known divergence the test is listed under: {"clause", "expected" ("Type: pattern"), "where"
    #: (file:line in the wheel), "reason", "evidence" ("observed", "random" or "code reading"), "line"}
    divergence: dict[str, Any] | None = None


@dataclass
class Document:
    """One session of the suite against one implementation (IMPL-1) in one environment."""

    format: int = FORMAT
    implementation: str | None = None
    #: IMPL-4: what ran when it is not the implementation itself (an adapter's label), else empty
    label: str | None = None
    device: str | None = None
    versions: dict[str, Any] = field(default_factory=dict)
    capabilities: list[str] = field(default_factory=list)
    profile: str | None = None
    selected_clauses: list[str] = field(default_factory=list)
    python: str | None = None
    host: str | None = None
    started: float | None = None
    finished: float | None = None
    exit_status: int | None = None
    divergence_file: str | None = None
    stale_divergences: list[str] = field(default_factory=list)
    fixed_upstream: list[str] = field(default_factory=list)
    tests: list[TestRecord] = field(default_factory=list)

    def to_json(self) -> str:
        # default=str: a version an implementation declares may be an object (packaging's Version, say)
        return json.dumps(asdict(self), indent=2, default=str) + "\n"


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _mapping(value: Any) -> dict[str, Any] | None:
    return dict(value) if isinstance(value, dict) else None


def from_dict(data: Any, source: str) -> Document:
    """The typed document of `data` read from `source` (named in every error); raises `ResultsError`."""
    tests = data.get("tests") if isinstance(data, dict) else None
    if not isinstance(tests, list):
        raise ResultsError(f"{source}: expected the suite's results document (an object with a 'tests' list), "
                           f"found {type(data).__name__}; write it with pytest torchair_conformance --conformance-json")
    try:
        versioned.check_format(data, FORMAT, what="a results document", fix=_FIX, absent=1)
    except ValueError as exc:
        raise ResultsError(f"{source}: {exc}") from exc
    records = []
    for i, record in enumerate(tests):
        if not isinstance(record, dict) or not isinstance(record.get("outcome"), str) or "test" not in record:
            raise ResultsError(f"{source} tests[{i}]: not a test record (needs 'test' and an 'outcome' string): "
                               f"{record!r:.200}")
        entries = versioned.known_fields(TestRecord, record)
        entries.update(test=test_id(str(record["test"])), clauses=list(entries.get("clauses") or []),
                       versions=dict(entries.get("versions") or {}),
                       exception=_mapping(entries.get("exception")), divergence=_mapping(entries.get("divergence")))
        records.append(TestRecord(**entries))
    entries = versioned.known_fields(Document, data)
    status = entries.get("exit_status")
    # the times and the exit status are only trusted as numbers: the matrix and the nightly compare them
    entries.update(format=FORMAT, tests=records, versions=dict(entries.get("versions") or {}),
                   started=_number(entries.get("started")), finished=_number(entries.get("finished")),
                   exit_status=status if isinstance(status, int) and not isinstance(status, bool) else None)
    return Document(**entries)


def read(path: str | os.PathLike) -> Document:
    """One results document, checked (see `from_dict`); an unreadable or non-JSON file is a `ResultsError` too."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except ValueError as exc:
        raise ResultsError(f"{path}: not JSON: {exc}") from exc
    return from_dict(data, str(path))


def write(path: str, document: Document) -> Path:
    """Write `document` to `path`, or, when `path` is a folder (or ends with a separator), to its own file there
    (`results_file_name`); returns the file written."""
    if path.endswith(("/", os.sep)) or os.path.isdir(path):
        # A folder: one file per implementation and environment (CANN, SoC), never overwritten by another.
        path = os.path.join(path, results_file_name(str(document.implementation), document.device,
                                                    document.versions))
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(document.to_json(), encoding="utf-8")
    return target


def results_file_name(impl: str, device: str | None, versions: dict[str, Any],
                      environ: Mapping[str, str] | None = None) -> str:
    """The results file of one implementation in one environment (CANN version, SoC): never shared by two.

    Where the implementation does not declare them, the SoC comes from `$TORCHAIR_SOC` (the pipeline's matrix sets
    it) and, on an NPU, the CANN version from the toolkit's install info under `$ASCEND_HOME_PATH`.
    """
    environ = os.environ if environ is None else environ
    found = {"soc": versions.get("soc") or environ.get("TORCHAIR_SOC"), "cann": versions.get("cann"),
             "variant": versions.get("variant") or environ.get("TORCHAIR_LEG_VARIANT")}
    if not found["cann"] and device == "npu":
        found["cann"] = cann.from_install_info(environ)
    parts = [impl, device or "unknown"]
    for name in ("cann", "soc", "variant"):
        if found[name]:
            parts.append(f"{name}-{found[name]}")
    return re.sub(r"[^A-Za-z0-9._+-]", "_", "-".join(parts)) + ".json"
