"""Known divergences (SPEC IMPL-5): ``known_divergences/<list>.txt``, one entry per line, five fields::

    <test id> | <clause> | <ExceptionType>: <message pattern> | <file:line in the wheel> | <reason>

``<list>`` is what the implementation declares as ``__conformance__["divergences"]`` (both adapters of upstream
declare ``torchair``), else its module name. ``<test id>`` is ``test_file.py::test_name`` with its exact
parametrization (``test_name[True-float32]``): an entry never names a parametrized test as a whole. The expected
failure is an exception type (its class name, or a dotted module path, matched against the class and its bases) and
a regular expression searched in the exception's message (an assertion's pattern names what the failing assertion
reports). A listed test that fails with another exception, or a message the pattern does not find, fails the run
("listed as X, failed with Y"); one that passes is an XPASS (fixed upstream), unless its reason starts with
``draw-dependent:`` (the divergence itself is random, so a pass proves nothing). A reason that starts with
``code reading:`` marks an entry no run has observed (it rests on reading the wheel only; e.g. it needs an NPU).
Entries that match no collected test are reported as stale. Blank lines and ``#`` comments are ignored; a line in
the old three-field form (``<test id> | <clause> | <reason>``) is an error naming the line and the new form.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from torchair_conformance.errors import ConformanceError

__all__ = ["Divergence", "DivergenceListError", "DIVERGENCE_DIR", "DRAW_DEPENDENT", "CODE_READING", "FORMAT",
           "default_file", "parse", "parse_expected", "matches", "match", "whole_test_entries", "failure_matches",
           "describe_failure", "trim"]

DIVERGENCE_DIR = Path(__file__).resolve().parent / "known_divergences"
DRAW_DEPENDENT = "draw-dependent:"
CODE_READING = "code reading:"
FORMAT = "<test id[params]> | <clause> | <ExceptionType>: <message pattern> | <file:line in the wheel> | <reason>"
#: how much of an exception's message the results document keeps
MESSAGE_CHARS = 600
_WHERE = re.compile(r"^[\w./-]+\.py:\d+(-\d+)?$")
_TYPE = re.compile(r"^[A-Za-z_][\w.]*$")


class DivergenceListError(ConformanceError, ValueError):
    """A divergence list that breaks IMPL-5's form; the message names the file, the line and the expected form."""


@dataclass(frozen=True)
class Divergence:
    """One known divergence of an implementation from a clause, with the failure it expects (IMPL-5)."""

    test: str
    clause: str
    #: the exception type the test fails with (class name or dotted path)
    exception: str
    #: a regular expression searched in the exception's message
    pattern: str
    #: ``file:line`` (comma-separated when several) in the wheel, paths under torch_npu/dynamo/torchair/
    where: str
    reason: str
    line: int

    @property
    def draw_dependent(self) -> bool:
        """Whether the divergence is itself random (an XPASS then is no evidence of a fix)."""
        return self.reason.startswith(DRAW_DEPENDENT)

    @property
    def code_reading(self) -> bool:
        """Whether the entry rests on reading the wheel only (no run has shown the failure)."""
        return self.reason.startswith(CODE_READING)

    @property
    def expected(self) -> str:
        """``Type: pattern``, as the entry states it."""
        return f"{self.exception}: {self.pattern}"


def default_file(list_name: str) -> Path | None:
    """``known_divergences/<list_name>.txt`` when it exists."""
    path = DIVERGENCE_DIR / f"{list_name}.txt"
    return path if path.is_file() else None


def parse_expected(text: str) -> tuple[str, str]:
    """``"Type: pattern"`` -> (type, pattern); a bad type or pattern raises ``ValueError`` naming it."""
    name, sep, pattern = text.partition(":")
    name, pattern = name.strip(), pattern.strip()
    if not sep or not _TYPE.match(name) or not pattern:
        raise ValueError(f"expected '<ExceptionType>: <message pattern>', got {text!r}")
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"message pattern {pattern!r} is not a regular expression: {exc}") from None
    return name, pattern


def _looks_expected(text: str) -> bool:
    try:
        parse_expected(text)
    except ValueError:
        return False
    return True


def parse(text: str, source: str = "<text>") -> list[Divergence]:
    """Parse a divergence file; a malformed or old-format line raises ``DivergenceListError`` naming file and line."""
    entries = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        here = f"{source}:{number}"
        parts = [p.strip() for p in line.split(" | ", 4)]
        if len(parts) in (3, 4) and not _looks_expected(parts[2]):
            raise DivergenceListError(
                f"{here}: an old-format entry '<test id> | <clause> | <reason>'; SPEC IMPL-5 wants the failure it "
                f"expects, convert it to '{FORMAT}' (run the test with the list emptied to see its failure): {raw!r}")
        if len(parts) != 5 or not all(parts):
            raise DivergenceListError(f"{here}: expected '{FORMAT}', got {raw!r}")
        test, clause, expected, where, reason = parts
        try:
            exception, pattern = parse_expected(expected)
        except ValueError as exc:
            raise DivergenceListError(f"{here}: {exc} (the form is '{FORMAT}')") from None
        bad = [w for w in (p.strip() for p in where.split(",")) if not _WHERE.match(w)]
        if bad:
            raise DivergenceListError(f"{here}: {bad[0]!r} is not a 'file.py:line' in the wheel (the form is "
                                      f"'{FORMAT}')")
        entries.append(Divergence(test, clause, exception, pattern, where, reason, number))
    return entries


def matches(entry: Divergence, test_id: str) -> bool:
    """Whether ``entry`` names ``test_id``: the very same id, parametrization included."""
    return test_id == entry.test


def match(entries: Sequence[Divergence], test_ids: Iterable[str]) -> tuple[dict, list[Divergence]]:
    """``{test id: divergence}`` for matching tests (first entry wins) and the entries that matched nothing."""
    by_test: dict[str, Divergence] = {}
    for entry in entries:
        by_test.setdefault(entry.test, entry)
    matched = {test_id: by_test[test_id] for test_id in test_ids if test_id in by_test}
    used = {id(e) for e in matched.values()}
    return matched, [e for e in entries if id(e) not in used]


def whole_test_entries(entries: Sequence[Divergence], test_ids: Iterable[str]) -> dict[str, list[str]]:
    """Entries that name a parametrized test without its parameters: ``{file:line: test}`` -> its collected cases."""
    cases: dict[str, list[str]] = {}
    for test_id in test_ids:
        if "[" in test_id:
            cases.setdefault(test_id.split("[", 1)[0], []).append(test_id)
    return {f"{e.line}: {e.test}": sorted(cases[e.test]) for e in entries if "[" not in e.test and e.test in cases}


def _names(kind: type) -> set[str]:
    return {n for cls in kind.__mro__ for n in (cls.__name__, f"{cls.__module__}.{cls.__qualname__}")}


def failure_matches(entry: Divergence, exc: BaseException) -> bool:
    """IMPL-5: ``exc`` is the failure ``entry`` expects: its type (or a base) by name, and the pattern in its
    message."""
    return entry.exception in _names(type(exc)) and re.search(entry.pattern, str(exc)) is not None


def trim(text: str, limit: int = MESSAGE_CHARS) -> str:
    """``text`` cut to ``limit`` characters (head and tail kept: the reason is often at the end)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    half = (limit - 5) // 2
    return f"{text[:half]} ... {text[-half:]}"


def describe_failure(exc: BaseException, pattern: str | None = None) -> Mapping[str, str]:
    """``{"type": module.Class, "message": trimmed}``: what the results document records for a failure; where
    ``pattern`` (an entry's) is found in a long message, the trimmed message keeps its head and the text found."""
    kind = type(exc)
    name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    text = str(exc).strip()
    found = re.search(pattern, text) if pattern else None
    half = (MESSAGE_CHARS - 5) // 2
    if found is None or len(text) <= MESSAGE_CHARS or found.end() <= half or found.start() >= len(text) - half:
        return {"type": name, "message": trim(text)}
    head = MESSAGE_CHARS // 3
    start = max(head, found.start() - 100)
    return {"type": name, "message": f"{text[:head]} ... {text[start:start + MESSAGE_CHARS - head - 5]}"}
