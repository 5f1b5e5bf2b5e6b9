"""Guard expressions (SPEC CC-21 (a), (b), CC-22): pure rules. An expression (the shape environment's
`4 <= L['x'].size()[0]`, `L['n'] != 1`, tied weights `A is B`) becomes a template over `_s{i}` that only integer,
comparison and identity forms and `FUNCTIONS` may use (`parse_expression`); `substitute` writes the code back.
Nothing here depends on the process (CC-22).
"""
from __future__ import annotations

import ast
import functools
import math
import re
import sys
from typing import Any, cast

import torch

from torchair_ref.inference.guard_spec import source_of
from torchair_ref.inference.guard_values import UnknownGuard, loaded_code_digest

_COMPARE = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot)
_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
#: the pure functions (and constants) a guard expression may use, by the name a template holds them under: those
#: Dynamo's shape-guard printer (torch's sympy `PythonPrinter`) writes, and `math.isnan` (a float
#: argument the graph specialised on); `_DOTTED` maps the dotted names it writes to them
_MATH = ("isnan", "floor", "ceil", "trunc", "log2", "cos", "cosh", "acos", "sin", "sinh", "asin", "tan", "tanh", "atan",
         "inf", "nan")
FUNCTIONS: dict[str, Any] = {"max": max, "min": min, "abs": abs, "round": round, "sym_float": torch.sym_float,
                             **{name: getattr(math, name) for name in _MATH}}
_FUNCTIONS = frozenset(FUNCTIONS)
_DOTTED = {**{f"math.{name}": name for name in _MATH}, "torch.sym_float": "sym_float"}


def parse_expression(text: str) -> tuple[str, list[str]]:
    """An integer/identity guard expression as (template, sources): each source replaced by `_s{i}` (pure)."""
    template, sources = _parsed_expression(text)
    return template, list(sources)


@functools.lru_cache(maxsize=4096)
def _parsed_expression(text: str) -> tuple[str, tuple[str, ...]]:
    """`parse_expression`, cached: a warm start validates each expression when the record is read and again when
    its check is written. A template as `ast` writes the common forms (`_s0 == _s1`, `_s0 is _s1`, `2 <= _s0`,
    `_s0 == 1e-05`, `not isnan(_s0)`: each of GPT-2's 37) is taken as it is (`_simple_template`)."""
    if _simple_template(text):
        return text, ()
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError) as exc:
        raise UnknownGuard(f"the guard {text!r} is not a Python expression") from exc
    replace = _Templated()
    body, sources = cast(ast.Expression, replace.visit(tree)).body, replace.sources
    for node in ast.walk(body):
        allowed = (
            isinstance(node, (ast.BoolOp, ast.And, ast.Or, ast.Load, ast.Not, ast.USub))
            or (isinstance(node, ast.Compare) and all(isinstance(op, _COMPARE) for op in node.ops))
            or isinstance(node, _COMPARE) or isinstance(node, _ARITH)
            or (isinstance(node, ast.BinOp) and isinstance(node.op, _ARITH))
            or (isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)))
            or (isinstance(node, ast.Constant) and type(node.value) in (int, float, bool, str, type(None)))
            or (isinstance(node, ast.Name) and (_TEMPLATE_NAME.fullmatch(node.id) or node.id in _FUNCTIONS))
            or (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS
                and not node.keywords)
        )
        if not allowed:
            raise UnknownGuard(f"the guard {text!r} uses {type(node).__name__}, which a warm start cannot check")
    return ast.unparse(body), tuple(sources)


#: a comparison of two operands, or `not isnan(...)`, in the spelling `ast.unparse` writes (one space around the
#: operator); an operand is a template name or a non-negative number (`_simple_template` checks how it is written)
_SIMPLE = re.compile(r"(?:(_s(?:0|[1-9][0-9]{0,5})|[0-9][0-9.e+-]{0,30}) (==|!=|<|<=|>|>=|is|is not) "
                     r"(_s(?:0|[1-9][0-9]{0,5})|[0-9][0-9.e+-]{0,30})|not isnan\((_s(?:0|[1-9][0-9]{0,5}))\))")
_INTEGER = re.compile(r"0|[1-9][0-9]{0,17}")


def _simple_template(text: str) -> bool:
    """Whether `text` is a template `_parsed_expression` would give back as it is, with no source, known without
    `ast` (about 50 us each at a warm start's first reading): a comparison of two template names or numbers as
    `ast.unparse` writes them (an integer without a leading zero, a finite float as `repr` writes it), or
    `not isnan(_s{i})`. Anything else is left to `ast` (a test holds the two to the same result)."""
    found = _SIMPLE.fullmatch(text)
    if found is None:
        return False
    for operand in (found.group(1), found.group(3)):
        if operand is None or operand.startswith("_s") or _INTEGER.fullmatch(operand):
            continue
        try:
            number = float(operand)
        except ValueError:
            return False
        if repr(number) != operand:  # an infinite float is written `inf`, which no operand is
            return False
    return True


class _Templated(ast.NodeTransformer):
    """`_parsed_expression`'s rewrite: each source as `_s{i}` (its first `sources` index), and `math.ceil` and the
    like as the names a template holds (a class made once: a warm start validates each template when it loads)."""

    def __init__(self) -> None:
        self.sources: list[str] = []

    def visit(self, node: ast.AST) -> ast.AST:
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and f"{node.value.id}.{node.attr}" in _DOTTED):
            # `math.ceil(...)` in a shape guard, `not math.isnan(L['scale'])`: the name a template holds
            return ast.Name(id=_DOTTED[f"{node.value.id}.{node.attr}"], ctx=ast.Load())
        if isinstance(node, ast.expr) and source_of(node) is not None:
            text = ast.unparse(node)
            if text not in self.sources:
                self.sources.append(text)
            return ast.Name(id=f"_s{self.sources.index(text)}", ctx=ast.Load())
        return self.generic_visit(node)


@functools.lru_cache(maxsize=4096)
def functions_in(template: str) -> tuple[str, ...]:
    """The names of `FUNCTIONS` a template may use, in `FUNCTIONS`' order (a name inside a string constant counts):
    the only functions its check needs bound (binding all 22 for each of GPT-2's 37 expressions was 800 binds)."""
    found = set(_NAME.findall(_parsed_expression(template)[0]))  # as `ast` reads it: `ｉｓｎａｎ` is `isnan`
    return tuple(name for name in FUNCTIONS if name in found)


def substitute(template: str, codes: dict[str, str], prefix: str | dict[str, str]) -> str:
    """A validated template with each `_s{i}` replaced by the code that reads it, and each function name prefixed
    or renamed by the `prefix` mapping (the generated code's own names for them) (pure). A template without a
    string constant is rewritten name by name (its names are only `_s{i}`, functions and keywords; a code that is
    not a name goes in parentheses); one with a string constant through `ast`, so that no text inside it changes."""
    template = _parsed_expression(template)[0]  # as `ast` writes it (a text a record holds may be written otherwise)
    if "'" not in template and '"' not in template:
        def name(match: re.Match[str]) -> str:
            token = match.group()
            if token in codes:
                code = codes[token]
                return code if code.isidentifier() else f"({code})"
            if token in _FUNCTIONS:
                return prefix[token] if isinstance(prefix, dict) else prefix + token
            return token

        return _NAME.sub(name, template)

    class Replace(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id in codes:
                return ast.parse(codes[node.id], mode="eval").body
            name = prefix[node.id] if isinstance(prefix, dict) else prefix + node.id
            return ast.Name(id=name, ctx=ast.Load())

    return ast.unparse(Replace().visit(ast.parse(template, mode="eval")).body)


#: a source's name in a template
_TEMPLATE_NAME = re.compile(r"_s\d+")
#: a name in a template (or the letters of a number's exponent, which no name matches and so stay as they are)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


#: this module's code as the process loaded it: part of what names a stored check's writer (`guard_check`)
LOADED_DIGEST = loaded_code_digest(sys._getframe(0).f_code)
