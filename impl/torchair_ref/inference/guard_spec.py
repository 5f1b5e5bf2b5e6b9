"""Guard sources (SPEC CC-21, CC-22): the pure parsing every guard kind (`guard_kinds`) shares.

A source is the path Dynamo names a guarded object by (`L['x']`, `L['self']._modules['lin']`,
`G['helper'].__code__`, `list(dict.keys(X))[i]`): `parse_source` reads it into a root and steps, refusing any other
form; `guard_check` turns the steps into code (`guard_expressions` reads the expressions over sources). `when` says
whether a check reads the call's arguments ("call") or only the module and the code it reaches ("first"). Nothing
here depends on the process: no ids, no addresses, no hash order (CC-22).
"""
from __future__ import annotations

import ast
import functools
import keyword
import re
import sys
import types
from collections.abc import Iterable
from typing import Any

from torchair_ref import _torch

# re-exported (`name as name`, which mypy --strict reads as a re-export): the checks' one vocabulary
from torchair_ref.inference.guard_values import UnknownGuard as UnknownGuard
from torchair_ref.inference.guard_values import class_digest as class_digest
from torchair_ref.inference.guard_values import code_digest as code_digest
from torchair_ref.inference.guard_values import describe_class as describe_class
from torchair_ref.inference.guard_values import describe_object as describe_object
from torchair_ref.inference.guard_values import from_literal as from_literal
from torchair_ref.inference.guard_values import literal as literal
from torchair_ref.inference.guard_values import loaded_code_digest
from torchair_ref.inference.guard_values import qualified_name as qualified_name

_METHODS = frozenset(("size", "stride", "storage_offset", "dim", "numel"))  # no set constant: see LOADED_DIGEST
_HELPERS = {_torch.ODICT_GETITEM: "item", "type": "type", "dict": "dict"}


# -- sources -----------------------------------------------------------------------------------------------------

def parse_source(text: str) -> tuple[list[str], list[list[Any]]]:
    """`L['x'].attr[0]` -> (["L", "x"], [["attr", "attr"], ["item", 0]]) (pure); UnknownGuard for another form."""
    root, steps = parsed_source(text)
    return list(root), [list(step) for step in steps]


#: what a key in quotes may hold for the readers without `ast`: no quote, backslash, line end, NUL or lone surrogate
#: (the text is then left to `ast`, which reads escapes and refuses the rest)
_KEY_CHARS = r"[^'\\\n\r\x00\ud800-\udfff]*"
#: the common form of a source, a chain of attributes and constant keys (`L['self']._modules['fc'].weight`)
_PLAIN_SOURCE = re.compile(
    r"([LG])\['(" + _KEY_CHARS + r")'\]((?:\.[A-Za-z_][A-Za-z0-9_]*|\['" + _KEY_CHARS + r"'\]|\[(?:0|[1-9][0-9]*)\])*)")
_PLAIN_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\['([^'\\]*)'\]|\[([0-9]+)\]")


@functools.lru_cache(maxsize=8192)
def parsed_source(text: str) -> tuple[tuple[str, ...], tuple[tuple[Any, ...], ...]]:
    """`parse_source` as immutable tuples, cached: a warm start validates then follows each of a few hundred
    sources, so each is parsed once per process. A chain of attributes and constant keys is read by one regex; the
    other forms Dynamo writes by `_Reader`; what both leave (other spacing or quotes, keywords as names, anything
    unknown) goes through `ast`, which decides."""
    plain = _PLAIN_SOURCE.fullmatch(text)
    if plain is not None:
        steps: list[tuple[str, Any]] = []
        for attr, key, index in _PLAIN_STEP.findall(plain.group(3)):
            if attr and keyword.iskeyword(attr):
                break
            steps.append(("attr", attr) if attr else ("item", int(index)) if index else ("item", key))
        else:
            return (plain.group(1), plain.group(2)), tuple(steps)
    found = _Reader(text).whole()
    if found is None:
        found = _parse_with_ast(text)
    return tuple(found[0]), tuple(tuple(step) for step in found[1])


_KEY = "'(" + _KEY_CHARS + ")'"
_INT = r"(0|[1-9][0-9]{0,17})(?![0-9_.a-zA-Z])"
#: how deep the reader nests helpers and keys before it leaves the text to `ast` (whose parser stops at 200)
_DEPTH = 50
_ROOT = re.compile(r"([LG])\[" + _KEY + r"\]")
_ATTR = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)")
_ITEM = re.compile(r"\[(?:" + _KEY + "|" + _INT + r")\]")
_CONSTANT = re.compile(_KEY + "|" + _INT)
_INDEX = re.compile(_INT)


class _Reader:
    """CC-21/CC-22: a source in the exact spelling Dynamo writes, read without `ast` (a warm start reads a few
    hundred; `ast` takes about 30 us each): `whole()` is its (root, steps) as `_parse_with_ast` gives them, or None
    wherever the text leaves that spelling, never another reading (a test holds the two to that)."""

    def __init__(self, text: str) -> None:
        self.text, self.pos, self.depth = text, 0, 0

    def whole(self) -> tuple[list[str], list[list[Any]]] | None:
        """The whole text as one source, or None."""
        found = self.source()
        return found if found is not None and self.pos == len(self.text) else None

    def take(self, literal: str) -> bool:
        """Whether the text goes on with `literal` (then read past it)."""
        if self.text.startswith(literal, self.pos):
            self.pos += len(literal)
            return True
        return False

    def match(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        """`pattern` matched where the reader stands (then read past it), or None."""
        found = pattern.match(self.text, self.pos)
        if found is not None:
            self.pos = found.end()
        return found

    def index(self) -> int | None:
        """A non-negative integer literal, or None."""
        found = self.match(_INDEX)
        return None if found is None else int(found.group(1))

    def keys_index(self, container: str) -> int | None:
        """`list(dict.keys(X))[i]` with X spelled as `container`, after its opening `list(dict.keys(`: i."""
        start = self.pos
        if self.source() is None or self.text[start:self.pos] != container or not self.take("))["):
            return None
        found = self.index()
        return found if found is not None and self.take("]") else None

    def source(self) -> tuple[list[str], list[list[Any]]] | None:
        """A root or helper form, then its attributes, method calls and keys; None past `_DEPTH` nested sources."""
        start = self.pos
        self.depth += 1
        found = self.primary() if self.depth <= _DEPTH else None
        self.depth -= 1
        if found is None:
            return None
        root, steps = found
        while self.pos < len(self.text):
            if self.text[self.pos] == ".":
                attr = self.match(_ATTR)
                if attr is None or keyword.iskeyword(attr.group(1)):
                    return None
                if self.take("()"):
                    if attr.group(1) not in _METHODS:
                        return None
                    steps.append(["call", attr.group(1)])
                else:
                    steps.append(["attr", attr.group(1)])
            elif self.text[self.pos] == "[":
                container = self.text[start:self.pos]
                item = self.match(_ITEM)
                if item is not None:
                    steps.append(["item", item.group(1) if item.group(2) is None else int(item.group(2))])
                elif self.take("[list(dict.keys("):
                    at = self.keys_index(container)
                    if at is None or not self.take("]"):
                        return None
                    steps.append(["at", at])
                else:
                    return None
            else:
                break
        return root, steps

    def primary(self) -> tuple[list[str], list[list[Any]]] | None:
        """`L['x']`/`G['x']`, or a helper around a source: `type`, `dict`, `___odict_getitem`, `list(dict.keys())`,
        `dict.__getitem__`."""
        root = self.match(_ROOT)
        if root is not None:
            return [root.group(1), root.group(2)], []
        if self.take("dict.__getitem__("):
            start = self.pos
            inner = self.source()
            container = self.text[start:self.pos]
            if inner is None or not self.take(", list(dict.keys("):
                return None
            at = self.keys_index(container)
            return None if at is None or not self.take(")") else (inner[0], inner[1] + [["at", at]])
        if self.take("list(dict.keys("):
            inner = self.source()
            if inner is None or not self.take("))["):
                return None
            index = self.index()
            return None if index is None or not self.take("]") else (inner[0], inner[1] + [["key", index]])
        if self.take(_torch.ODICT_GETITEM + "("):
            inner = self.source()
            constant = self.match(_CONSTANT) if inner is not None and self.take(", ") else None
            if inner is None or constant is None or not self.take(")"):
                return None
            key = constant.group(1) if constant.group(2) is None else int(constant.group(2))
            return inner[0], inner[1] + [["item", key]]
        for helper in ("type", "dict"):
            if self.take(helper + "("):
                inner = self.source()
                return None if inner is None or not self.take(")") else (inner[0], inner[1] + [[helper, None]])
        return None


def _parse_with_ast(text: str) -> tuple[list[str], list[list[Any]]]:
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError) as exc:  # ValueError: a NUL, a lone surrogate
        raise UnknownGuard(f"the guard source {text!r} is not an expression") from exc
    found = source_of(node)
    if found is None:
        raise UnknownGuard(f"the guard source {text!r} has a form a warm start cannot follow")
    return found


def source_of(node: ast.AST) -> tuple[list[str], list[list[Any]]] | None:
    """The (root, steps) of an AST node that is a source, or None."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in ("L", "G"):
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return [node.value.id, key.value], []
        return None
    if isinstance(node, ast.Attribute):
        inner = source_of(node.value)
        return None if inner is None else (inner[0], inner[1] + [["attr", node.attr]])
    if isinstance(node, ast.Subscript):
        key = node.slice
        keys_of = _keys_of(node.value)
        if keys_of is not None and isinstance(key, ast.Constant) and type(key.value) is int:
            inner = source_of(keys_of)
            return None if inner is None else (inner[0], inner[1] + [["key", key.value]])
        if isinstance(key, ast.Constant) and type(key.value) in (int, str):
            inner = source_of(node.value)
            return None if inner is None else (inner[0], inner[1] + [["item", key.value]])
        index = _key_index(key, node.value)
        if index is not None:
            inner = source_of(node.value)
            return None if inner is None else (inner[0], inner[1] + [["at", index]])
        return None
    if isinstance(node, ast.Call) and not node.keywords:
        func = node.func
        if isinstance(func, ast.Name) and func.id in _HELPERS:
            step = _HELPERS[func.id]
            if step == "item":
                if len(node.args) != 2 or not (isinstance(node.args[1], ast.Constant)
                                               and type(node.args[1].value) in (int, str)):
                    return None
                inner = source_of(node.args[0])
                return None if inner is None else (inner[0], inner[1] + [["item", node.args[1].value]])
            if len(node.args) != 1:
                return None
            inner = source_of(node.args[0])
            return None if inner is None else (inner[0], inner[1] + [[step, None]])
        if (isinstance(func, ast.Attribute) and func.attr == "__getitem__" and isinstance(func.value, ast.Name)
                and func.value.id == "dict" and len(node.args) == 2):
            # `dict.__getitem__(X, list(dict.keys(X))[i])`: Dynamo's form for a dict subclass (transformers'
            # `_CanRecordRegistry(dict)`), the value at insertion index i, read past the subclass's `__getitem__`
            index = _key_index(node.args[1], node.args[0])
            inner = None if index is None else source_of(node.args[0])
            return None if inner is None else (inner[0], inner[1] + [["at", index]])
        if isinstance(func, ast.Attribute) and func.attr in _METHODS and not node.args:
            inner = source_of(func.value)
            return None if inner is None else (inner[0], inner[1] + [["call", func.attr]])
    return None


def _keys_of(call: ast.AST) -> ast.AST | None:
    """X in `list(dict.keys(X))` (the dict's keys in insertion order), else None."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "list"
            and len(call.args) == 1 and isinstance(call.args[0], ast.Call)):
        return None
    keys = call.args[0]
    if not (isinstance(keys.func, ast.Attribute) and keys.func.attr == "keys" and isinstance(keys.func.value, ast.Name)
            and keys.func.value.id == "dict" and len(keys.args) == 1):
        return None
    return keys.args[0]


def _key_index(key: ast.AST, container: ast.AST) -> int | None:
    """`list(dict.keys(X))[i]` used as the key into X itself: the value at insertion index i."""
    if not (isinstance(key, ast.Subscript) and isinstance(key.slice, ast.Constant) and type(key.slice.value) is int):
        return None
    keys_of = _keys_of(key.value)
    return key.slice.value if keys_of is not None and ast.dump(keys_of) == ast.dump(container) else None


def when(sources: Iterable[str], fixed: frozenset[str]) -> str:
    """"call" when a source is a local of the frame other than those in `fixed` (`self` and the closure's cells,
    which belong to the module and the code), else "first" (pure)."""
    for source in sources:
        root, _ = parse_source(source)
        if root[0] == "L" and root[1] not in fixed:
            return "call"
    return "first"


# -- what the checks read ---------------------------------------------------------------------------------------

def global_names(specs: Iterable[Any]) -> set[str]:
    """The module globals the checks read (`G[name]` roots of each spec's `read_sources()`) (pure)."""
    names = set()
    for spec in specs:
        for source in spec.read_sources():
            root, _ = parse_source(source)
            if root[0] == "G":
                names.add(root[1])
    return names


#: this module's code as the process loaded it: part of what names a stored check's writer (`guard_check`)
def resolve(source: str, frame: dict[str, Any], module_globals: Any, memo: dict[str, Any] | None = None,
            parsed: Any = None) -> Any:
    """The live object at a guard source: `L[...]` from `frame`, `G[...]` from `module_globals`; `parsed` is the
    source as `parsed_source` reads it, where the caller holds that already (a stored check, written with it)."""
    if memo is not None and source in memo:
        return memo[source]
    (root, name), steps = parsed_source(source) if parsed is None else parsed
    value = frame[name] if root == "L" else module_globals[name]
    for op, arg in steps:
        value = _step(value, op, arg)
    if memo is not None:
        memo[source] = value
    return value


def _step(value: Any, op: str, arg: Any) -> Any:
    if op == "attr":
        return getattr(value, arg)
    if op == "item":
        return dict.__getitem__(value, arg) if isinstance(value, dict) else value[arg]
    if op == "at":
        key = list(dict.keys(value))[arg]  # past a dict subclass's own __getitem__, as Dynamo reads it
        return dict.__getitem__(value, key) if isinstance(value, dict) else value[key]
    if op == "key":
        return list(dict.keys(value))[arg]
    if op == "type":
        return type(value)
    if op == "dict":
        return dict(value)
    return getattr(value, arg)()  # "call": size(), stride(), ...


def cells(function: types.FunctionType) -> dict[str, Any]:
    """The contents of the function's closure cells, by name (an empty cell is left out)."""
    found = {}
    for name, cell in zip(function.__code__.co_freevars, function.__closure__ or ()):
        try:
            found[name] = cell.cell_contents
        except ValueError:
            continue
    return found


def _class_dict_copy(steps: tuple[tuple[Any, ...], ...], index: int) -> bool:
    """Whether `steps[index]` is the copy in `dict(X.__dict__)[k]` (then `dict` of an `__dict__`, then a key)."""
    return (0 < index < len(steps) - 1 and steps[index][0] == "dict" and steps[index - 1] == ("attr", "__dict__")
            and steps[index + 1][0] == "item")


def source_code(source: str, params: set[str | None], hoisted: dict[str, str] | None = None,
                 reads: list[str] | None = None) -> str:
    """Python code reading a per-call source from the wrapper's parameters (names and keys only); given `hoisted`
    and `reads`, each step is read once into a local (`_tq_s{n} = ...` appended to `reads`) and reused."""
    (root, name), steps = parsed_source(source)
    if root == "L":
        code = name if name in params else f"_tq_cells[{name!r}].cell_contents"
    else:
        code = f"_tq_G[{name!r}]"
    copied = -1
    for index, (op, arg) in enumerate(steps):
        if copied >= 0 and index == copied + 1:
            continue  # the key read with the copy before it
        if hoisted is not None and reads is not None and code not in params:
            if code not in hoisted:
                hoisted[code] = f"_tq_s{len(hoisted)}"
                reads.append(f"{hoisted[code]} = {code}")
            code = hoisted[code]
        if op == "dict" and _class_dict_copy(steps, index) and code.isidentifier():
            # `dict(C.__dict__)[k]`, Dynamo's form for a class attribute: a class's `__dict__` is a read-only view
            # of its dict, whose `[k]` is the copy's; copying it was a fifth of a transformers model's check
            key = steps[index + 1][1]
            code, copied = f"({code}[{key!r}] if _tq_type({code}) is _tq_proxy else _tq_dict({code})[{key!r}])", index
        elif op == "attr" or op == "call":
            if not str(arg).isidentifier():
                raise UnknownGuard(f"{source}: {arg!r} is not an attribute name")
            code = f"{code}.{arg}" + ("()" if op == "call" else "")
        elif op == "item":
            code = f"{code}[{arg!r}]"
        elif op == "key":
            code = f"_tq_list(_tq_dict.keys({code}))[{int(arg)}]"
        elif op == "at":
            code = f"_tq_dict.__getitem__({code}, _tq_list(_tq_dict.keys({code}))[{int(arg)}])"
        else:
            code = f"_tq_{op}({code})"
    if hoisted is not None and reads is not None and code not in params:
        if code not in hoisted:
            hoisted[code] = f"_tq_s{len(hoisted)}"
            reads.append(f"{hoisted[code]} = {code}")
        code = hoisted[code]
    return code


LOADED_DIGEST = loaded_code_digest(sys._getframe(0).f_code)
