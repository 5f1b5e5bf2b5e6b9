"""The per-call check's fast path as statements with few names (SPEC CC-21; issue 29 item 7).

`guard_check` writes each read of a source once into a local of its own (`_tq_s{n} = ...`, the `reads`) and each
check as an expression over those locals and the constants it bound (`_tq_b{n}`, the `tests`). Every name a code
object holds is interned when the code loads, and at a transformers model's warm start Python's table of interned
names is large: each name new to it cost microseconds. GPT-2's check named 581 locals and 252 constants, and
interning them was most of the stored check's decode (on this project's host at its slowest, 1.8 to 4.0 ms the
first time, 0.35 to 0.67 ms laid out as here). So the fast path is laid out here:

- each read comes just before the first statement that needs it, and each check right after the reads it needs, in
  the checks' order; a check that fails raises `Exception`, which the fast path's `except` takes as it takes a read
  that fails;
- the locals are registers (`_tq_r{k}`): a register is free after the statement that uses its value last, and a
  read takes the lowest free one (GPT-2's check needs 39);
- a constant is an item of one tuple, `_tq_B[n]` (`constants`), not a global of its own.

The fast path holds exactly when every read succeeds and every check holds, as when every read came first; only
the order of reads and checks differs (Dynamo's own guards interleave them too), and a failure goes to the slow
path, which runs each read and each check alone. Pure functions of the texts.
"""
from __future__ import annotations

import heapq
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from torchair_ref.inference.guard_values import UnknownGuard, loaded_code_digest

#: a string literal as `repr` writes one (a group): what a rewrite of a check's names keeps as it is
LITERAL = r"""('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")"""
#: a string literal (group 1), or a local (`s`) or constant (`b`) and its number
_NAME = re.compile(LITERAL + r"|\b_tq_([sb])([0-9]+)\b")


def _locals(code: str) -> list[str]:
    """The hoisted locals `code` names (outside its string literals), in order, each once."""
    found = dict.fromkeys(f"_tq_s{m.group(3)}" for m in _NAME.finditer(code) if m.group(2) == "s")
    return list(found)


def laid_out(reads: Sequence[str], tests: Sequence[str]) -> list[str]:
    """The fast path's lines (a `raise` indented under its `if`) for `reads` (`_tq_s{n} = code`, each naming only
    locals read before it) and `tests` (expressions): laid out, renamed and with constants as tuple items, as the
    module says. A read no test needs is still made, after the tests (as every read was made before)."""
    defined: dict[str, str] = {}
    for line in reads:
        name, code = line.split(" = ", 1)
        defined[name] = code
    statements: list[tuple[str | None, str]] = []  # (the local a read assigns, None for a check; its code)
    placed: set[str] = set()

    def place(name: str) -> None:
        if name in placed:
            return
        if name not in defined:
            raise UnknownGuard(f"a check names {name}, which no read assigns")
        for used in _locals(defined[name]):
            place(used)
        placed.add(name)
        statements.append((name, defined[name]))

    for test in tests:
        for used in _locals(test):
            place(used)
        statements.append((None, test))
    for name in defined:
        place(name)
    return _registers(statements)


def _registers(statements: list[tuple[str | None, str]]) -> list[str]:
    """The statements as lines, each local renamed to the lowest register free where it is assigned."""
    last: dict[str, int] = {}
    for index, (_, code) in enumerate(statements):
        for used in _locals(code):
            last[used] = index
    free: list[int] = []
    register: dict[str, int] = {}
    lines: list[str] = []
    count = 0
    for index, (name, code) in enumerate(statements):
        text = _NAME.sub(lambda m: _renamed(m, register), code)
        for used in _locals(code):
            if last[used] == index:
                heapq.heappush(free, register[used])
        if name is None:
            lines += [f"if not ({text}):", "    raise Exception"]
            continue
        if free:
            register[name] = heapq.heappop(free)
        else:
            register[name], count = count, count + 1
        lines.append(f"_tq_r{register[name]} = {text}")
        if name not in last:  # read by nothing after it: its register is free at once
            heapq.heappush(free, register[name])
    return lines


def _renamed(match: re.Match[str], register: Mapping[str, int]) -> str:
    if match.group(1):
        return match.group(1)
    if match.group(2) == "b":
        return f"_tq_B[{match.group(3)}]"
    return f"_tq_r{register['_tq_s' + match.group(3)]}"


def numbered(text: str) -> str:
    """`text` with each constant `_tq_b{n}` (outside its string literals) as the item `_tq_B[n]`: for a check
    that is one expression (the load-time check of a module's tensors)."""
    return _NAME.sub(lambda m: f"_tq_B[{m.group(3)}]" if m.group(2) == "b" else m.group(0), text)


def constants(namespace: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """`_tq_B`: the constant bound as `_tq_b{n}` in `namespace` at index n; None unless the names bound are exactly
    `_tq_b0` to `_tq_b{N-1}` (as the check writers number them), so that no item is missing or named twice."""
    global _NAMES  # noqa: PLW0603 - the names made once, their hashes kept (a check binds hundreds)
    bound = [name for name in namespace if name[:5] == "_tq_b"]
    names = _NAMES
    if len(names) < len(bound):  # a new list, never one another thread is reading grown under it
        names = _NAMES = [f"_tq_b{index}" for index in range(max(len(bound), 2 * len(names)))]
    names = names[:len(bound)]
    return tuple(map(namespace.__getitem__, names)) if set(bound) == set(names) else None


_NAMES: list[str] = []

LOADED_DIGEST = loaded_code_digest(sys._getframe(0).f_code)  # this module's code as the process loaded it
