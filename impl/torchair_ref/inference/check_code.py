"""Generated check code's parts shared by the per-call check and the load-time check (SPEC CC-14, CC-17, CC-21).

`Writer` is the `guard_kinds.Code` the check writers hand to each guard kind: it reads sources as its caller says
and binds each constant under a fresh name (`_tq_b{n}`, numbered in the order of first binding). `encoded` and
`decoded` turn compiled check code into the text a record keeps and back; a value that does not decode to code of
the expected title is None, never an exception (CC-17: a damaged record is compiled afresh). `Gone` is what a
source that cannot be read holds in the slow path.
"""
from __future__ import annotations

import base64
import binascii
import marshal
import sys
import types
import zlib
from collections.abc import Callable
from typing import Any

from torchair_ref.inference.guard_values import loaded_code_digest


class Gone:
    """What a source that cannot be read holds in the generated slow path: every check that uses it fails."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(name)

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = None  # type: ignore[assignment]


class Writer:
    """`guard_kinds.Code` for generated checks: sources read by `read` (a function of a source), constants bound in
    `namespace` under fresh names (the same object once)."""

    def __init__(self, namespace: dict[str, Any], read: Callable[[str], str]) -> None:
        self._namespace, self._read = namespace, read
        self._names: dict[int, str] = {}
        self._kept: list[Any] = []  # keeps each bound object alive, so its id is not reused while names map it
        self.log: list[str] | None = None  # where given, each name `bind` returns, in order

    def reading(self, read: Callable[[str], str]) -> Writer:
        """A writer that reads sources with `read` and binds in this one's namespace, under this one's names."""
        other = Writer(self._namespace, read)
        other._names, other._kept = self._names, self._kept
        return other

    def read(self, source: str) -> str:
        return self._read(source)

    def bind(self, value: Any) -> str:
        name = self._names.get(id(value))
        if name is None:
            name = self._names[id(value)] = f"_tq_b{len(self._names)}"
            self._namespace[name] = value
            self._kept.append(value)
        if self.log is not None:
            self.log.append(name)
        return name


def encoded(code: types.CodeType) -> str:
    """Code as a record keeps it: marshalled, compressed, base64."""
    return base64.b64encode(zlib.compress(marshal.dumps(code))).decode("ascii")


def decoded(value: Any, title: str) -> types.CodeType | None:
    """The code `encoded` wrote, where it is code named `title`; None for any other value (never an exception)."""
    if not isinstance(value, str):
        return None
    try:
        code = marshal.loads(zlib.decompress(base64.b64decode(value, validate=True)))
    except (binascii.Error, zlib.error, ValueError, EOFError, TypeError):
        return None
    return code if isinstance(code, types.CodeType) and code.co_filename == title else None


LOADED_DIGEST = loaded_code_digest(sys._getframe(0).f_code)  # this module's code as the process loaded it
