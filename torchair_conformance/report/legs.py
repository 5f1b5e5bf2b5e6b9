"""The nightly's legs: implementation x SoC x CANN x torch-npu, and which of them the night expects (SPEC BE-4).

A leg is an NPU environment the nightly runs (a record or results document with a CANN version); CPU runs are
published by hand and belong to no night. The night's expected legs come from the workflow's matrix
(`--expected-legs FILE`, a JSON list of `{"impl", "soc", "cann", "torch_npu"}`; `impl` defaults to `torchair_npu`);
without that list every leg that has run before is expected, unless the reviewed file `reports/retired-legs.json`
retires it (see `load_retired`).
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from torchair_conformance.errors import ConformanceError
from torchair_conformance.report import cann as cann_mod

#: the implementation the nightly's matrix runs when a leg does not name one
DEFAULT_IMPL = "torchair_npu"
FIELDS = ("impl", "soc", "cann", "torch_npu", "variant")
#: SoC names as the NPU reports them -> the product family the matrix names (A2: Atlas A2 / Ascend 910B, A3: Atlas
#: A3 / Ascend 910_93)
_FAMILIES = ((re.compile(r"(?i)(ascend)?910_?93\w*|a3"), "A3"), (re.compile(r"(?i)(ascend)?910b\w*|a2"), "A2"))


class LegsError(ConformanceError, ValueError):
    """An expected-legs or retired-legs file that cannot be read; the message names the file and the entry."""


def soc_family(name: Any) -> str | None:
    """`Ascend910B2` -> `A2`, `Ascend910_9391` -> `A3`; any other name as it is."""
    if name is None:
        return None
    for pattern, family in _FAMILIES:
        if pattern.fullmatch(str(name).strip()):
            return family
    return str(name)


@dataclass(frozen=True)
class Leg:
    """One leg; fields compare after normalizing (SoC family, CANN spelling). `variant` tells apart two legs of one
    (SoC, CANN, torch-npu) that run other images (the OS and Python of each)."""

    impl: str
    soc: str | None
    cann: str | None
    torch_npu: str | None
    variant: str | None = None

    @classmethod
    def of(cls, impl: Any, soc: Any, cann: Any, torch_npu: Any, variant: Any = None) -> Leg:
        cann_text = str(cann) if cann is not None else None
        if cann_text is not None and cann_mod.sort_key(cann_text)[0] == 1:
            cann_text = cann_mod.normalize(cann_text)
        # torch-npu's local part (`+git...`) names a build of the same release
        npu = str(torch_npu).split("+", 1)[0] if torch_npu is not None else None
        return cls(str(impl), soc_family(soc), cann_text, npu, str(variant) if variant else None)

    @property
    def label(self) -> str:
        """`A3 · CANN 8.2.RC1 · torch-npu 2.14.0 (torchair_npu)`."""
        parts = [self.soc or "SoC ?", f"CANN {self.cann or '?'}"]
        if self.torch_npu:
            parts.append(f"torch-npu {self.torch_npu}")
        if self.variant:
            parts.append(self.variant)
        return " · ".join(parts) + f" ({self.impl})"

    def fields(self) -> dict[str, str | None]:
        return {name: getattr(self, name) for name in FIELDS}


def of_env(env: Mapping[str, Any]) -> Leg | None:
    """The leg of a history record's environment, None off-NPU."""
    if not env.get("cann"):
        return None
    return Leg.of(env.get("impl"), env.get("soc"), env.get("cann"), env.get("torch_npu"), env.get("variant"))


def of_results(implementation: str, versions: Mapping[str, Any]) -> Leg | None:
    """The leg of a results document (its implementation and versions), None off-NPU."""
    if not versions.get("cann"):
        return None
    return Leg.of(implementation, versions.get("soc"), versions.get("cann"), versions.get("torch_npu"),
                  versions.get("variant"))


@dataclass(frozen=True)
class Retired:
    """A reviewed retirement: the legs whose fields match `match` are no longer expected."""

    match: Mapping[str, str]
    reason: str
    reviewed: str

    def covers(self, leg: Leg) -> bool:
        wanted = Leg.of(self.match.get("impl", leg.impl), self.match.get("soc", leg.soc),
                        self.match.get("cann", leg.cann), self.match.get("torch_npu", leg.torch_npu),
                        self.match.get("variant", leg.variant))
        return wanted == leg


def _read(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except ValueError as exc:
        raise LegsError(f"{path}: not JSON: {exc}") from exc


def load_expected(path: str) -> list[Leg]:
    """The night's expected legs from `path`: a JSON list of objects with `soc`, `cann`, `torch_npu` (and optional
    `impl`); other keys (the matrix's `image`, `torch`) are ignored; `[]` expects none (a run that is no leg, such as
    the nightly command on a CPU). A missing file is an error: the caller asked."""
    try:
        data = _read(path)
    except FileNotFoundError as exc:
        raise LegsError(f"expected-legs file {path!r} does not exist; write the workflow matrix's legs there, or "
                        f"leave --expected-legs out to expect every leg that has run before") from exc
    if not isinstance(data, list):
        raise LegsError(f"{path}: expected a JSON list of legs ({{'soc', 'cann', 'torch_npu'}} objects)")
    out = []
    for i, entry in enumerate(data):
        if not (isinstance(entry, dict) and all(isinstance(entry.get(k), str) and entry[k] for k in FIELDS[1:4])):
            raise LegsError(f"{path} [{i}]: a leg needs 'soc', 'cann' and 'torch_npu' strings: {entry!r:.200}")
        try:
            out.append(Leg.of(entry.get("impl") or DEFAULT_IMPL, entry["soc"], cann_mod.normalize(entry["cann"]),
                              entry["torch_npu"], entry.get("variant")))
        except cann_mod.CannVersionError as exc:
            raise LegsError(f"{path} [{i}]: {exc}") from exc
    return out


def load_retired(path: str) -> list[Retired]:
    """The reviewed file of retired legs (none when `path` does not exist).

    Format: `{"retired": [{"match": {"soc": "A2", "cann": "8.0.RC3"}, "reason": "...", "reviewed": "PR #..."}]}`;
    `match` names some of `impl`, `soc`, `cann`, `torch_npu`, compared after normalizing.
    """
    try:
        data = _read(path)
    except FileNotFoundError:
        return []
    entries = data.get("retired") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise LegsError(f"{path}: expected an object with a 'retired' list")
    out = []
    for i, entry in enumerate(entries):
        ok = (isinstance(entry, dict) and isinstance(entry.get("match"), dict) and entry["match"]
              and set(entry["match"]) <= set(FIELDS)
              and isinstance(entry.get("reason"), str) and entry["reason"].strip()
              and isinstance(entry.get("reviewed"), str) and entry["reviewed"].strip())
        if not ok:
            raise LegsError(f"{path} retired[{i}]: needs a non-empty 'match' object over {list(FIELDS)}, a 'reason' "
                            f"and 'reviewed': {entry!r:.200}")
        out.append(Retired(dict(entry["match"]), entry["reason"], entry["reviewed"]))
    return out
