"""Known divergences: ``known_divergences/<list>.txt``, one ``<test id> | <clause> | <reason>`` per line.

``<list>`` is what the implementation declares as ``__conformance__["divergences"]`` (both adapters of upstream
declare ``torchair``), else its module name. An entry names a whole test: ``test_file.py::test_name`` matches that
test and every parametrized case of it (``test_name[...]``); ``test_file.py::test_name[params]`` matches that case
only. A matching test becomes an xfail (or a skip, with ``--known-divergences=skip``); one that then passes is
reported as fixed upstream, unless its reason starts with ``draw-dependent:`` (the divergence shows only for some
hypothesis draws, so a pass proves nothing). Entries that match no collected test are reported as stale. Blank lines and ``#``
comments are ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Divergence", "DIVERGENCE_DIR", "DRAW_DEPENDENT", "default_file", "parse", "matches", "match"]

DIVERGENCE_DIR = Path(__file__).resolve().parent / "known_divergences"
DRAW_DEPENDENT = "draw-dependent:"


@dataclass(frozen=True)
class Divergence:
    """One known divergence of an implementation from a clause."""

    test: str
    clause: str
    reason: str
    line: int

    @property
    def draw_dependent(self) -> bool:
        """Whether the divergence shows only for some draws (an XPASS then is no evidence of a fix)."""
        return self.reason.startswith(DRAW_DEPENDENT)


def default_file(list_name: str) -> Path | None:
    """``known_divergences/<list_name>.txt`` when it exists."""
    path = DIVERGENCE_DIR / f"{list_name}.txt"
    return path if path.is_file() else None


def parse(text: str, source: str = "<text>") -> list[Divergence]:
    """Parse a divergence file; a malformed line raises ``ValueError`` naming the file and line."""
    entries = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split("|", 2)]
        if len(parts) != 3 or not all(parts):
            raise ValueError(f"{source}:{number}: expected '<test id> | <clause> | <reason>', got {raw!r}")
        entries.append(Divergence(parts[0], parts[1], parts[2], number))
    return entries


def matches(entry: Divergence, test_id: str) -> bool:
    """Whether ``entry`` names ``test_id``: the same id, or the same test without parameters (all its cases)."""
    return test_id == entry.test or ("[" not in entry.test and test_id.split("[", 1)[0] == entry.test)


def match(entries: Sequence[Divergence], test_ids: Iterable[str]) -> tuple[dict, list[Divergence]]:
    """``{test id: divergence}`` for matching tests (first entry wins) and the entries that matched nothing."""
    matched = {}
    used = set()
    for test_id in test_ids:
        for entry in entries:
            if matches(entry, test_id):
                matched[test_id] = entry
                used.add(entry)
                break
    return matched, [e for e in entries if e not in used]
