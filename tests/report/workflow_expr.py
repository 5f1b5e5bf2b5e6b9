"""A small evaluator of the GitHub Actions expressions the workflows use, to render jobs the way GitHub would.

The subset: literals ('text', numbers, true, false, null), context paths (`matrix.soc`, `needs.legs.outputs.include`,
`steps.report.outputs.status`, `a['b']`), `!`, `==`, `!=`, `&&`, `||` (with GitHub's values: `a || b` is the first
truthy operand, `a && b` the first falsy one or the last; strings compare case-insensitively), parentheses and the
functions fromJSON, toJSON, format, contains, cancelled, success, failure and always. Anything else raises, so a
workflow that starts using more fails the tests rather than rendering wrongly. Matrix expansion follows GitHub's rules
for `include:` (https://docs.github.com/actions/using-jobs/using-a-matrix-for-your-jobs).
"""
from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Mapping
from typing import Any

_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)|(?P<op>\|\||&&|==|!=|[!()\[\].,])"
                    r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))")
_EXPR = re.compile(r"\$\{\{((?:(?!\}\}).)*)\}\}", re.S)


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(text):
        if not text[pos:].strip():
            break
        match = _TOKEN.match(text, pos)
        if match is None:
            raise ValueError(f"cannot read {text[pos:]!r} in the expression {text!r}")
        kind = match.lastgroup
        out.append((kind, match.group(kind)))
        pos = match.end()
    return out


def truthy(value: Any) -> bool:
    if isinstance(value, float) and math.isnan(value):
        return False
    return value not in (None, False, 0, "")


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.casefold() == b.casefold()
    return a == b


def to_string(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return str(value)


class _Parser:
    def __init__(self, text: str, context: Mapping[str, Any]) -> None:
        self.tokens, self.pos, self.context, self.text = _tokens(text), 0, context, text

    def peek(self) -> str | None:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str, str]:
        if self.pos >= len(self.tokens):
            raise ValueError(f"unexpected end of {self.text!r}")
        token = self.tokens[self.pos]
        if expected is not None and token[1] != expected:
            raise ValueError(f"expected {expected!r}, found {token[1]!r} in {self.text!r}")
        self.pos += 1
        return token

    def parse(self) -> Any:
        value = self.or_()
        if self.pos != len(self.tokens):
            raise ValueError(f"unexpected {self.peek()!r} in {self.text!r}")
        return value

    def or_(self) -> Any:
        value = self.and_()
        while self.peek() == "||":
            self.take()
            right = self.and_()
            value = value if truthy(value) else right
        return value

    def and_(self) -> Any:
        value = self.eq()
        while self.peek() == "&&":
            self.take()
            right = self.eq()
            value = right if truthy(value) else value
        return value

    def eq(self) -> Any:
        value = self.unary()
        while self.peek() in ("==", "!="):
            op = self.take()[1]
            right = self.unary()
            value = _equal(value, right) if op == "==" else not _equal(value, right)
        return value

    def unary(self) -> Any:
        if self.peek() == "!":
            self.take()
            return not truthy(self.unary())
        return self.primary()

    def primary(self) -> Any:
        kind, text = self.take()
        if text == "(":
            value = self.or_()
            self.take(")")
            return value
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "num":
            return float(text) if "." in text else int(text)
        if kind != "name":
            raise ValueError(f"unexpected {text!r} in {self.text!r}")
        if text in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[text]
        if self.peek() == "(":
            return self.call(text)
        value: Any = self.context.get(text)
        while self.peek() in (".", "["):
            if self.take()[1] == ".":
                key = self.take()[1]
            else:
                key = self.or_()
                self.take("]")
            value = value.get(key) if isinstance(value, Mapping) else None
        return value

    def call(self, name: str) -> Any:
        self.take("(")
        args = []
        while self.peek() != ")":
            args.append(self.or_())
            if self.peek() == ",":
                self.take()
        self.take(")")
        status = self.context.get("__status__", "success")
        functions = {
            "fromjson": lambda text: json.loads(text),
            "tojson": lambda value: json.dumps(value, indent=2),
            "format": lambda fmt, *rest: re.sub(r"\{(\d+)\}", lambda m: to_string(rest[int(m.group(1))]), fmt),
            "contains": lambda where, what: (any(_equal(x, what) for x in where) if isinstance(where, list)
                                             else to_string(what).casefold() in to_string(where).casefold()),
            "cancelled": lambda: status == "cancelled",
            "success": lambda: status == "success",
            "failure": lambda: status == "failure",
            "always": lambda: True,
        }
        if name.lower() not in functions:
            raise ValueError(f"the evaluator does not know {name}() (in {self.text!r})")
        return functions[name.lower()](*args)


def evaluate(expression: str, context: Mapping[str, Any]) -> Any:
    """The value of one expression (the text inside `${{ }}`)."""
    return _Parser(expression, context).parse()


def render(value: Any, context: Mapping[str, Any]) -> Any:
    """A workflow value with its `${{ }}` expressions evaluated: a string that is one expression keeps the
    expression's type (a `runs-on:` list), any other string has them interpolated; lists and maps recursively."""
    if isinstance(value, list):
        return [render(v, context) for v in value]
    if isinstance(value, dict):
        return {k: render(v, context) for k, v in value.items()}
    if not isinstance(value, str):
        return value
    whole = _EXPR.fullmatch(value.strip())
    if whole:
        return evaluate(whole.group(1), context)
    return _EXPR.sub(lambda m: to_string(evaluate(m.group(1), context)), value)


def condition(value: Any, context: Mapping[str, Any]) -> bool:
    """An `if:`: with or without `${{ }}`; GitHub adds `success() &&` to one that calls no status function."""
    if value is None:
        return truthy(evaluate("success()", context))
    text = value if isinstance(value, str) else to_string(value)
    whole = _EXPR.fullmatch(text.strip())
    text = whole.group(1) if whole else text
    if not re.search(r"\b(success|failure|cancelled|always)\(", text):
        text = f"success() && ({text})"
    return truthy(evaluate(text, context))


def expand_matrix(matrix: Mapping[str, Any]) -> list[dict[str, Any]]:
    """GitHub's matrix expansion: the product of the keys, then each `include` entry added to every combination whose
    original values it does not overwrite, or appended as its own combination; then `exclude`."""
    base = {k: v for k, v in matrix.items() if k not in ("include", "exclude")}
    combos = [dict(zip(base, values)) for values in itertools.product(*base.values())] if base else []
    originals = [dict(c) for c in combos]
    for entry in matrix.get("include") or []:
        added = False
        for combo, original in zip(combos, originals):
            if all(_equal(original[k], v) for k, v in entry.items() if k in original):
                combo.update(entry)
                added = True
        if not added:
            combos.append(dict(entry))
    excluded = matrix.get("exclude") or []
    return [c for c in combos if not any(all(_equal(c.get(k), v) for k, v in e.items()) for e in excluded)]
