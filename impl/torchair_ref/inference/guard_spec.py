"""Dynamo's guards as checks that run without Dynamo (SPEC CC-21, CC-22): the pure translation.

At the cold trace `guard_read` lists what Dynamo guarded for the traced frame, one raw guard per leaf of its guard
tree: the guard's kind (`TYPE_MATCH`, `LAMBDA_GUARD`, ...), the source it guards (`L['x']`, `L['self']._modules['lin']`,
`G['helper'].__code__`), its verbose code text, and the live object at the source. `translate` turns each into zero
or more *check specs*, plain JSON kept in the record; `guard_check` runs them on a warm start. A spec is
`{"check": <what>, "guard": <Dynamo's kind>, "when": "call" | "first", "text": <Dynamo's text>, ...}`:

- `class` (TYPE_MATCH): the type by qualified name, and for a class outside torch a digest of its code (`class_digest`),
  since Dynamo compares the type's id, which stands for the very class and so its methods;
- `object` (ID_MATCH): what the object is, by name (module, class, builtin), by code digest (code objects, functions)
  or by value (None, True, False, dtypes) -- ids differ per process;
- `constant` (NONE_MATCH, TRUE_MATCH, FALSE_MATCH), `equals` (EQUALS_MATCH, a JSON literal), `length` (LENGTH_CHECK,
  DICT_LENGTH and the implicit length of a dict guard), `contains` (DICT_CONTAINS: monkeypatching, hook ids),
  `no_attr` (NO_HASATTR), `distinct` (NO_TENSOR_ALIASING: no tensor object passed twice);
- `tensor` (TENSOR_MATCH on a tensor the warm graph's own input check does not see, e.g. parameter sizes: first call);
- `expr` (LAMBDA_GUARD, OBJECT_ALIASING): an integer/identity expression over sources, e.g. the shape environment's
  `4 <= L['x'].size()[0]`, `L['n'] != 1`, or tied weights `A is B`;
- `global_state` (GLOBAL_STATE: grad mode, autocast, default dtype, ... as PyTorch's own C++ `GlobalStateGuard`
  serialises it), `function_modes` (TORCH_FUNCTION_MODE_STACK: none active), `default_device` (DEFAULT_DEVICE).

`when` is "call" for what depends on the call's arguments or ambient state (every call), "first" for what depends
on the module and the code it reaches (the first call). Known kinds that need no check: DIMENSION_DYNAMIC_MARKING
(`mark_dynamic` changes which sizes a graph keeps symbolic, not its results; the sizes are checked), TENSOR_MATCH of
a tensor that is an input of the graph (the input check covers dtype, device, sizes and strides; `requires_grad` and
autograd dispatch keys do not matter to an inference graph), and the saved-tensor-hooks guard (an inference graph
saves no tensors). Any other kind, source form or value raises `UnknownGuard`: the function is then not cached.
Nothing here depends on the process: no ids, no addresses, no hash order (CC-22).
"""
from __future__ import annotations

import ast
import functools
import io
import json
import keyword
import re
import tokenize
from collections.abc import Iterable
from typing import Any

import torch

from torchair_ref import _torch
from torchair_ref.inference.guard_values import (  # noqa: F401 - re-exported: the checks' one vocabulary
    UnknownGuard,
    class_digest,
    code_digest,
    describe_class,
    describe_object,
    from_literal,
    literal,
    qualified_name,
)

_METHODS = frozenset({"size", "stride", "storage_offset", "dim", "numel"})
_HELPERS = {_torch.ODICT_GETITEM: "item", "type": "type", "dict": "dict"}
_COMPARE = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot)
_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Pow)
_FUNCTIONS = frozenset({"max", "min", "abs", "isnan"})
_NO_CHECK = frozenset({"DIMENSION_DYNAMIC_MARKING_GUARD"})
_SIZE_STRIDE = re.compile(r"size=\[([^\]]*)\], stride=\[([^\]]*)\]")


def strip_comment(text: str) -> str:
    """Dynamo's verbose code text without its trailing `# user line # file:line` comments (pure)."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                return text[:token.start[1]].rstrip()
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return text.strip()


# -- sources -----------------------------------------------------------------------------------------------------

def parse_source(text: str) -> tuple[list, list[list]]:
    """`L['x'].attr[0]` -> (["L", "x"], [["attr", "attr"], ["item", 0]]) (pure); UnknownGuard for another form."""
    root, steps = parsed_source(text)
    return list(root), [list(step) for step in steps]


#: the common form of a source, a chain of attributes and constant keys (`L['self']._modules['fc'].weight`), read
#: without the parser; anything else (helpers, `list(dict.keys(X))[i]`, keywords as names) goes through `ast`
_PLAIN_SOURCE = re.compile(r"([LG])\['([^'\\]*)'\]((?:\.[A-Za-z_][A-Za-z0-9_]*|\['[^'\\]*'\]|\[(?:0|[1-9][0-9]*)\])*)")
_PLAIN_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\['([^'\\]*)'\]|\[([0-9]+)\]")


@functools.lru_cache(maxsize=8192)
def parsed_source(text: str) -> tuple[tuple, tuple]:
    """`parse_source` as immutable tuples, cached: a warm start validates then follows each of a few hundred
    sources, so each is parsed once per process."""
    plain = _PLAIN_SOURCE.fullmatch(text)
    if plain is not None:
        steps = []
        for attr, key, index in _PLAIN_STEP.findall(plain.group(3)):
            if attr and keyword.iskeyword(attr):
                break
            steps.append(("attr", attr) if attr else ("item", int(index)) if index else ("item", key))
        else:
            return (plain.group(1), plain.group(2)), tuple(steps)
    root, steps = _parse_with_ast(text)
    return tuple(root), tuple(tuple(step) for step in steps)


def _parse_with_ast(text: str) -> tuple[list, list[list]]:
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        raise UnknownGuard(f"the guard source {text!r} is not an expression") from exc
    found = _source_of(node)
    if found is None:
        raise UnknownGuard(f"the guard source {text!r} has a form a warm start cannot follow")
    return found


def _source_of(node: ast.AST) -> tuple[list, list[list]] | None:
    """The (root, steps) of an AST node that is a source, or None."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in ("L", "G"):
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return [node.value.id, key.value], []
        return None
    if isinstance(node, ast.Attribute):
        inner = _source_of(node.value)
        return None if inner is None else (inner[0], inner[1] + [["attr", node.attr]])
    if isinstance(node, ast.Subscript):
        key = node.slice
        keys_of = _keys_of(node.value)
        if keys_of is not None and isinstance(key, ast.Constant) and type(key.value) is int:
            inner = _source_of(keys_of)
            return None if inner is None else (inner[0], inner[1] + [["key", key.value]])
        if isinstance(key, ast.Constant) and type(key.value) in (int, str):
            inner = _source_of(node.value)
            return None if inner is None else (inner[0], inner[1] + [["item", key.value]])
        index = _key_index(key, node.value)
        if index is not None:
            inner = _source_of(node.value)
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
                inner = _source_of(node.args[0])
                return None if inner is None else (inner[0], inner[1] + [["item", node.args[1].value]])
            if len(node.args) != 1:
                return None
            inner = _source_of(node.args[0])
            return None if inner is None else (inner[0], inner[1] + [[step, None]])
        if isinstance(func, ast.Attribute) and func.attr in _METHODS and not node.args:
            inner = _source_of(func.value)
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


# -- expressions -------------------------------------------------------------------------------------------------

def parse_expression(text: str) -> tuple[str, list[str]]:
    """An integer/identity guard expression as (template, sources): each source replaced by `_s{i}` (pure)."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise UnknownGuard(f"the guard {text!r} is not a Python expression") from exc
    sources: list[str] = []

    class Replace(ast.NodeTransformer):
        def visit(self, node: ast.AST) -> ast.AST:
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "isnan"
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "math"):
                # a float argument the graph specialised on: Dynamo guards `not math.isnan(L['scale'])`
                node.func = ast.Name(id="isnan", ctx=ast.Load())
            if isinstance(node, ast.expr) and _source_of(node) is not None:
                text = ast.unparse(node)
                if text not in sources:
                    sources.append(text)
                return ast.Name(id=f"_s{sources.index(text)}", ctx=ast.Load())
            return self.generic_visit(node)

    body = Replace().visit(tree).body
    for node in ast.walk(body):
        allowed = (
            isinstance(node, (ast.BoolOp, ast.And, ast.Or, ast.Load, ast.Not, ast.USub))
            or (isinstance(node, ast.Compare) and all(isinstance(op, _COMPARE) for op in node.ops))
            or isinstance(node, _COMPARE) or isinstance(node, _ARITH)
            or (isinstance(node, ast.BinOp) and isinstance(node.op, _ARITH))
            or (isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)))
            or (isinstance(node, ast.Constant) and type(node.value) in (int, float, bool, str, type(None)))
            or (isinstance(node, ast.Name) and (re.fullmatch(r"_s\d+", node.id) or node.id in _FUNCTIONS))
            or (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS
                and not node.keywords)
        )
        if not allowed:
            raise UnknownGuard(f"the guard {text!r} uses {type(node).__name__}, which a warm start cannot check")
    return ast.unparse(body), sources


def substitute(template: str, codes: dict[str, str], prefix: str) -> str:
    """A validated template with each `_s{i}` replaced by the code that reads it, and each function name prefixed
    (the generated code's own names for them) (pure)."""
    parse_expression(template)

    class Replace(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id in codes:
                return ast.parse(codes[node.id], mode="eval").body
            return ast.Name(id=prefix + node.id, ctx=ast.Load())

    return ast.unparse(Replace().visit(ast.parse(template, mode="eval")).body)


# -- translation -------------------------------------------------------------------------------------------------

def translate(kind: str, source: str | None, parts: list[str], value: Any, *, fixed: frozenset[str],
              graph_inputs: frozenset[str]) -> list[dict[str, Any]]:
    """CC-21: the checks for one of Dynamo's leaf guards (see the module docstring); UnknownGuard when not known.

    `parts` is the guard's verbose code text (comments stripped), `value` the live object at `source` at the cold
    trace (read only for kinds that need it), `fixed` the frame's locals that are not arguments of the call (`self`,
    closure cells: see `when`), `graph_inputs` the sources that are inputs of the compiled graph."""
    text = parts[0] if parts else ""
    if kind in _NO_CHECK or (kind == "LAMBDA_GUARD" and text == _torch.SAVED_TENSOR_HOOKS_GUARD):
        return []
    if kind == "GLOBAL_STATE":
        state = text.partition(" against ")[2]
        json.loads(state)
        return [_spec("global_state", kind, "call", text[:80], state=state)]
    if kind == "TORCH_FUNCTION_MODE_STACK":
        return [_spec("function_modes", kind, "call", text)]
    if kind == "DEFAULT_DEVICE":
        return [_spec("default_device", kind, "call", text,
                      device=None if value is None else str(value))]
    if kind in ("LAMBDA_GUARD", "OBJECT_ALIASING"):
        specs = []
        for part in parts:
            template, sources = parse_expression(part)
            specs.append(_spec("expr", kind, when(sources, fixed), part, expr=template, sources=sources))
        return specs
    if kind == "NO_TENSOR_ALIASING":
        if not parts:
            return []  # the same guard, listed again under each of its tensors
        call = ast.parse(text, mode="eval").body
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "check_no_aliasing"):
            raise UnknownGuard(f"{kind}: {text!r}")
        sources = [ast.unparse(arg) for arg in call.args]
        for item in sources:
            parse_source(item)
        return [_spec("distinct", kind, when(sources, fixed), text, sources=sources)]
    if source is None:
        raise UnknownGuard(f"{kind} ({text!r}) on no source")
    parse_source(source)
    at = when([source], fixed)
    if kind == "TENSOR_MATCH":
        if at == "call" and source in graph_inputs:
            return []
        if not isinstance(value, torch.Tensor):
            raise UnknownGuard(f"{kind} on {source}, which is not a tensor")
        found = _SIZE_STRIDE.search(text)
        if found is None:
            raise UnknownGuard(f"{kind}: no sizes and strides in {text!r}")
        size, stride = ([None if d.strip() == "None" else int(d) for d in group.split(",") if d.strip()]
                        for group in found.groups())
        return [_spec("tensor", kind, at, text, source=source, dtype=str(value.dtype),
                      device=value.device.type, size=size, stride=stride)]
    if kind == "TYPE_MATCH":
        return [_spec("class", kind, at, text, source=source, **describe_class(type(value)))]
    if kind == "ID_MATCH":
        return [_spec("object", kind, at, text, source=source, object=describe_object(value))]
    if kind in ("NONE_MATCH", "TRUE_MATCH", "FALSE_MATCH"):
        return [_spec("constant", kind, at, text, source=source,
                      value={"NONE_MATCH": None, "TRUE_MATCH": True, "FALSE_MATCH": False}[kind])]
    if kind == "EQUALS_MATCH":
        return [_spec("equals", kind, at, text, source=source, value=literal(value),
                      type=qualified_name(type(value)))]
    if kind in ("LENGTH_CHECK", "DICT_LENGTH", "DICT_GUARD"):
        return [_spec("length", kind, at, text, source=source, length=len(value))]
    if kind == "DICT_CONTAINS":
        negated = text.startswith("not ")
        call = ast.parse(text[4:] if negated else text, mode="eval").body
        if not (isinstance(call, ast.Call) and len(call.args) == 2 and isinstance(call.args[0], ast.Constant)
                and type(call.args[0].value) in (int, str)):
            raise UnknownGuard(f"{kind}: {text!r}")
        return [_spec("contains", kind, at, text, source=source, key=call.args[0].value, present=not negated)]
    if kind == "NO_HASATTR":
        call = ast.parse(text.removeprefix("not "), mode="eval").body
        if not (isinstance(call, ast.Call) and len(call.args) == 2 and isinstance(call.args[1], ast.Constant)):
            raise UnknownGuard(f"{kind}: {text!r}")
        return [_spec("no_attr", kind, at, text, source=source, attr=call.args[1].value)]
    raise UnknownGuard(f"{kind} ({text[:120]!r})")


def _spec(check: str, guard: str, at: str, text: str, **fields: Any) -> dict[str, Any]:
    return {"check": check, "guard": guard, "when": at, "text": text[:300], **fields}


def global_names(specs: list[dict[str, Any]]) -> set[str]:
    """The module globals the checks read (`G[name]` roots) (pure)."""
    names = set()
    for spec in specs:
        for source in spec.get("sources", []) + ([spec["source"]] if "source" in spec else []):
            root, _ = parse_source(source)
            if root[0] == "G":
                names.add(root[1])
    return names


#: the keys each kind of spec must have (a record whose specs lack them is broken: `validate`)
FIELDS = {
    "class": ("source", "name", "digest"), "object": ("source", "object"), "constant": ("source", "value"),
    "equals": ("source", "value", "type"), "length": ("source", "length"), "contains": ("source", "key", "present"),
    "no_attr": ("source", "attr"), "distinct": ("sources",), "tensor": ("source", "dtype", "device", "size", "stride"),
    "expr": ("expr", "sources"), "global_state": ("state",), "function_modes": (), "default_device": ("device",),
}


def validate(specs: Any) -> str | None:
    """What is wrong with a recorded list of specs (pure), or None: each has a known check and its fields, its
    sources parse and its expression is one `parse_expression` accepts."""
    if not isinstance(specs, list):
        return f"the guards are a {type(specs).__name__}, not a list"
    for i, spec in enumerate(specs):
        if not isinstance(spec, dict) or spec.get("check") not in FIELDS or spec.get("when") not in ("call", "first"):
            return f"guard {i} is not a check spec: {spec!r:.200}"
        missing = [k for k in FIELDS[spec["check"]] if k not in spec]
        if missing:
            return f"guard {i} lacks {missing}"
        try:
            for source in spec.get("sources", []) + ([spec["source"]] if "source" in spec else []):
                parse_source(source)
            if spec["check"] == "expr":
                template, _ = parse_expression(spec["expr"])
        except (UnknownGuard, TypeError) as exc:
            return f"guard {i}: {exc}"
    return None
