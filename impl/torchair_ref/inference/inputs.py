"""What a cached graph assumes of its tensor inputs, checked on every call (SPEC CC-14, CC-15).

The record lists, per graph input, the dtype, device, rank, the static sizes and strides (None where Dynamo made
them symbolic), and for symbolic ones their expressions (`size_expr`, `stride_expr`: "s0", "s1*s2"): a symbol
bound by one size or stride must agree wherever else it appears, and a compound expression must evaluate to the
actual value (the kernels index with them). `contiguous` marks a tensor whose symbolic strides are row-major.
`mismatch` is the full check in
Python (pure: it returns what does not fit, or None). `GraphInputCheck` runs the full check on the first call, then
builds PyTorch's C++ `TensorGuards` (`_torch.tensor_guards`, no Dynamo import) from the inputs that passed, with the
symbolic dims left free: later calls cost one C++ call, and only an input it rejects goes through the full check
again. A mismatch never reaches a kernel. `guaranteed_layouts` says which inputs' sizes and strides both paths fix
completely, so that the graph loader can leave out Inductor's own asserts of the same (`compilers.inductor`).
"""
from __future__ import annotations

import ast
import collections
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from torchair_ref import _torch
from torchair_ref.errors import TorchairRefError

#: grad mode without a context-manager object, bound once: every warm call switches it (CC-16)
_SET_GRAD = _torch.set_grad_enabled_fn()


@dataclass(frozen=True)
class Mismatch:
    """Why a call's input does not fit the compiled graph; `kind` is "layout" (size/stride) or "type"."""

    kind: str
    message: str


class InputMismatchError(TorchairRefError):
    """A call's input does not fit the compiled graph's dtype/device/rank: the caller recompiles (never raised out)."""

    def __init__(self, mismatch: Mismatch) -> None:
        super().__init__(mismatch.message)
        self.mismatch = mismatch


def mismatch(args: tuple | list, inputs: list[dict]) -> Mismatch | None:
    """CC-15: the first input that does not fit its record, or None when all fit."""
    if len(args) != len(inputs):
        return Mismatch("type", f"the graph takes {len(inputs)} inputs, the call gave {len(args)}")
    for arg, meta in zip(args, inputs):
        if meta.get("kind") != "tensor":
            continue
        found = _tensor_mismatch(arg, meta)
        if found is not None:
            return found
    return layout_mismatch(args, inputs)


def layout_mismatch(args: tuple | list, inputs: list[dict]) -> Mismatch | None:
    """CC-15: the first dim whose size or stride does not fit, in the words of upstream's (and Inductor's)
    `assert_size_stride`: `expected size {actual}=={expected}, stride {actual}=={expected} at dim={i}`, with the
    concrete values the graph expects: a symbolic size or stride is evaluated with its symbols bound where the
    call's inputs first fix them (as the graph binds them from its size inputs)."""
    bound = _bindings(args, inputs)
    for arg, meta in zip(args, inputs):
        if meta.get("kind") != "tensor":
            continue
        size, stride = arg.size(), arg.stride()
        sizes = _expected(meta["shape"], meta.get("size_expr"), bound, size)
        strides = (_row_major(sizes) if meta.get("contiguous") and arg.numel() > 1
                   else _expected(meta["stride"], meta.get("stride_expr"), bound, stride))
        for dim in range(len(size)):
            if size[dim] != sizes[dim] or (size[dim] > 1 and stride[dim] != strides[dim]):
                return Mismatch(
                    "layout",
                    f"expected size {size[dim]}=={sizes[dim]}, stride {stride[dim]}=={strides[dim]} at dim={dim} "
                    f"(input {meta['source']}; the cache was compiled for other shapes: call with the cached shapes, "
                    "or delete its folder to recompile)",
                )
    if needs_symbolic_check(inputs) and not SymbolicCheck(inputs).ok(args):
        return Mismatch("layout", "the inputs' sizes and strides do not fit the graph's symbols")
    return None


def _bindings(args: tuple | list, inputs: list[dict]) -> dict[str, int]:
    """Each plain symbol's value where the inputs first fix it (a stride of a dim of size 0 or 1 fixes nothing)."""
    bound: dict[str, int] = {}
    for i, kind, dim, expr in symbolic_terms(inputs):
        tensor = args[i]
        if _SYMBOL.match(expr) and expr not in bound and (kind == "size" or tensor.size(dim) > 1):
            bound[expr] = tensor.size(dim) if kind == "size" else tensor.stride(dim)
    return bound


def _expected(static: list, exprs: list | None, bound: dict[str, int], actual: Any) -> list:
    """The sizes (or strides) the graph expects: the static ones, else their expression's value (the actual value
    where a symbol of it is fixed nowhere else, so that only a relation the inputs break is reported)."""
    values = []
    for dim, want in enumerate(static):
        expr = (exprs or [None] * len(static))[dim]
        if want is None and expr is not None:
            try:
                want = evaluate(expr, bound)
            except KeyError:
                want = actual[dim]
        values.append(actual[dim] if want is None else want)
    return values


def _row_major(size: Any) -> list[int]:
    strides, step = [], 1
    for extent in reversed(size):
        strides.append(step)
        step *= max(extent, 1)
    return strides[::-1]


def symbolic_terms(inputs: list[dict]) -> list[tuple[int, str, int, str]]:
    """(input, "size"/"stride", dim, expression) of every symbolic size and stride the check must relate (pure);
    the strides of a `contiguous` input are left out (`is_contiguous` checks them)."""
    terms = []
    for i, meta in enumerate(inputs):
        for kind in ("size", "stride"):
            if kind == "stride" and meta.get("contiguous"):
                continue
            for dim, expr in enumerate(meta.get(f"{kind}_expr") or ()):
                if expr is not None:
                    terms.append((i, kind, dim, expr))
    return terms


def needs_symbolic_check(inputs: list[dict]) -> bool:
    """Whether a symbol is shared or an expression compound, i.e. the sizes and strides must agree (pure)."""
    seen: set[str] = set()
    for _, _, _, expr in symbolic_terms(inputs):
        if not _SYMBOL.match(expr) or expr in seen:
            return True
        seen.add(expr)
    return False


class SymbolicCheck:
    """The relations between the graph's symbols, prepared once: `ok(args)` is the per-call test."""

    def __init__(self, inputs: list[dict]) -> None:
        self._inputs = inputs
        self._plan = []
        for i, kind, dim, expr in symbolic_terms(inputs):
            compiled = None if _SYMBOL.match(expr) else compile(ast.parse(expr, mode="eval"), "<expr>", "eval")
            if compiled is not None:
                _evaluate(ast.parse(expr, mode="eval").body, collections.defaultdict(int))  # only +, -, *, **k, ints
            self._plan.append((i, kind == "stride", dim, expr, compiled))

    def ok(self, args: tuple | list) -> bool:
        bound: dict[str, int] = {}
        later = []
        for i, stride, dim, expr, compiled in self._plan:
            tensor = args[i]
            if stride:
                if tensor.size(dim) <= 1:
                    continue
                actual = tensor.stride(dim)
            else:
                actual = tensor.size(dim)
            if compiled is not None:
                later.append((compiled, actual))
            elif bound.setdefault(expr, actual) != actual:
                return False
        try:
            return all(eval(compiled, _NO_BUILTINS, bound) == actual for compiled, actual in later)  # noqa: S307
        except NameError:
            return False


_NO_BUILTINS: dict[str, Any] = {"__builtins__": {}}
_SYMBOL = re.compile(r"^[a-z]+\d+$")
_INTEGER = re.compile(r"^\d+$")


def evaluate(expr: str, values: dict[str, int]) -> int:
    """The integer value of a sum, difference or product of integers, symbols and their small integer powers
    (pure); ValueError for anything else."""
    return _evaluate(ast.parse(expr, mode="eval").body, values)


def _evaluate(node: ast.AST, values: dict[str, int]) -> int:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name):
        return values[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult, ast.Sub)):
        left, right = _evaluate(node.left, values), _evaluate(node.right, values)
        return left + right if isinstance(node.op, ast.Add) else left * right if isinstance(node.op, ast.Mult) else (
            left - right)
    if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Constant)
            and type(node.right.value) is int and 0 <= node.right.value <= _MAX_EXPONENT):
        return _evaluate(node.left, values) ** node.right.value  # sympy's s0**2 for a size that is a square
    raise ValueError(f"unsupported expression {ast.unparse(node)!r}")


_MAX_EXPONENT = 8


def _tensor_mismatch(arg: Any, meta: dict) -> Mismatch | None:
    source = meta["source"]
    if not isinstance(arg, torch.Tensor):
        return Mismatch("type", f"input {source}: expected a tensor, got {type(arg).__name__}")
    if str(arg.dtype) != meta["dtype"]:
        return Mismatch("type", f"input {source}: expected dtype {meta['dtype']}, got {arg.dtype}")
    if arg.device != torch.device(meta["device"]):
        return Mismatch("type", f"input {source}: expected device {meta['device']}, got {arg.device}")
    pytype = f"{type(arg).__module__}.{type(arg).__qualname__}"
    if meta.get("pytype", pytype) != pytype:  # a file from before the type was recorded checks no type
        return Mismatch("type", f"input {source}: expected a {meta['pytype']}, got a {pytype}")
    if arg.dim() != len(meta["shape"]):
        return Mismatch("type", f"input {source}: expected {len(meta['shape'])} dims, got {arg.dim()} "
                                f"({list(arg.size())})")
    return None


class GraphInputCheck:
    """The compiled graph as the cached bytecode calls it: inputs checked on every call, then the kernels run with
    grad mode off (CC-16: outputs carry no graph; the bytecode around the graph only gathers inputs and packs
    outputs, so switching grad mode for the kernels alone is enough, and costs nothing under `torch.no_grad()`).

    `on_mismatch(m)` is called with an input that does not fit and must raise (an `AssertionError` for a size or
    stride, CC-15; `InputMismatchError` to recompile). `bind(scope, name)` names the global through which the
    bytecode calls the graph: each check that passes puts the fast call there, so the bytecode calls it directly.
    """

    def __init__(self, boxed: Callable[[list], Any], inputs: list[dict], on_mismatch: Callable[[Mismatch], None]):
        self._boxed = boxed
        self._inputs = inputs
        self._on_mismatch = on_mismatch
        self._tensor_at = [i for i, meta in enumerate(inputs) if meta.get("kind") == "tensor"]
        self._scope: dict[str, Any] = {}
        self._name = ""

    def bind(self, scope: dict[str, Any], name: str) -> None:
        self._scope, self._name = scope, name
        scope[name] = self._checked_call

    def _checked_call(self, *args: Any) -> Any:
        found = mismatch(args, self._inputs)
        if found is not None:
            self._on_mismatch(found)
            raise AssertionError(found.message)  # on_mismatch must raise; never run the kernels regardless
        if self._name:
            try:
                self._scope[self._name] = self._fast_call(args)
            except Exception:  # noqa: BLE001 - no C++ check on this torch: every call keeps the full check
                self._name = ""
        return without_grad(self._boxed, list(args))

    def _fast_call(self, first: tuple) -> Callable[..., Any]:
        """A call that checks with one C++ call, built from inputs that passed the full check: TensorGuards for
        dtype, device, rank, static sizes and strides; `is_contiguous` and the symbols' relations, as one
        expression generated from the record's (validated) integers and index names. It takes exactly as many
        positional arguments as the graph has inputs (the bytecode always passes them so)."""
        at = self._tensor_at
        tensors = [first[i] for i in at]
        metas = [self._inputs[i] for i in at]
        guards = _torch.tensor_guards()(
            *tensors,
            dynamic_dims_sizes=[_static(t.size(), fixed_sizes(m)) for t, m in zip(tensors, metas)],
            dynamic_dims_strides=[_static(t.stride(), m["stride"]) for t, m in zip(tensors, metas)],
        )
        params = ", ".join(f"a{i}" for i in range(len(self._inputs)))
        tests = ["check(" + ", ".join(f"a{i}" for i in at) + ")"]
        tests += [f"a{i}.is_contiguous()" for i in at if self._inputs[i].get("contiguous")]
        relations = relation_tests(self._inputs, arg="a{}")
        namespace: dict[str, Any] = {
            "check": guards.check, "boxed": self._boxed, "slow": self._checked_call,
            "grad_enabled": torch.is_grad_enabled, "set_grad": _SET_GRAD,
        }
        if relations is None:
            namespace["related"] = SymbolicCheck(self._inputs).ok
            tests.append(f"related(({params},))" if params else "related(())")
        else:
            tests += relations
        source = (
            f"def fast_call({params}):\n"
            f"    if {' and '.join(tests)}:\n"
            "        if grad_enabled():\n"
            "            set_grad(False)\n"
            "            try:\n"
            f"                return boxed([{params}])\n"
            "            finally:\n"
            "                set_grad(True)\n"
            f"        return boxed([{params}])\n"
            f"    return slow({params})\n"
        )
        exec(compile(source, "<torchair_ref input check>", "exec"), namespace)  # noqa: S102 - ints and names only
        return namespace["fast_call"]


def without_grad(boxed: Callable[[list], Any], args: list) -> Any:
    """CC-16: run the graph's kernels with grad mode off, restoring the caller's mode."""
    if not torch.is_grad_enabled():
        return boxed(args)
    _SET_GRAD(False)
    try:
        return boxed(args)
    finally:
        _SET_GRAD(True)


def fixed_sizes(meta: dict) -> list:
    """The input's sizes as the guard fixes them (pure): the static ones, and symbolic ones whose expression is a
    plain integer (Dynamo specialised the symbol); None where the size is free."""
    exprs = meta.get("size_expr") or [None] * len(meta["shape"])
    return [want if want is not None else (int(expr) if _INTEGER.match(expr or "") else None)
            for want, expr in zip(meta["shape"], exprs)]


def guaranteed_layouts(inputs: list[dict]) -> list[tuple[list[int], list[int]] | None]:
    """CC-15: per graph input, the (sizes, strides) that `GraphInputCheck` makes sure of before any kernel runs
    (pure): those of a tensor whose every size (recorded or specialised by Dynamo, `fixed_sizes`) and stride is
    static, or row-major: a `contiguous` tensor with every size fixed and none 0 (`is_contiguous()` on every call
    then leaves exactly the row-major strides); None for any other input. The stride of a dim of size 0 or 1 is not
    checked: no index reaches it (nor does `assert_size_stride` compare it)."""
    layouts: list[tuple[list[int], list[int]] | None] = []
    for meta in inputs:
        if meta.get("kind") != "tensor":
            layouts.append(None)
            continue
        sizes, strides = fixed_sizes(meta), list(meta["stride"])
        if None in strides and None not in sizes and meta.get("contiguous") and 0 not in sizes:
            row_major = _row_major(sizes)
            if all(want in (None, got) for want, got in zip(strides, row_major)):
                strides = row_major
        layouts.append((sizes, strides) if None not in sizes and None not in strides else None)
    return layouts


def relation_tests(inputs: list[dict], arg: str = "args[{}]") -> list[str] | None:
    """The symbols' relations as Python tests on the inputs (pure; input i is named `arg.format(i)`), or None when a
    symbol is only fixed by a stride and used again (then `SymbolicCheck` decides at run time)."""
    defined: dict[str, str] = {}
    for i, kind, dim, expr in symbolic_terms(inputs):
        if kind == "size" and _SYMBOL.match(expr) and expr not in defined:
            defined[expr] = f"{arg.format(int(i))}.size({int(dim)})"
    tests = []
    counts = collections.Counter(
        name.id for _, _, _, expr in symbolic_terms(inputs) for name in ast.walk(ast.parse(expr, mode="eval"))
        if isinstance(name, ast.Name)
    )
    for i, kind, dim, expr in symbolic_terms(inputs):
        actual = f"{arg.format(int(i))}.{kind}({int(dim)})"
        if _SYMBOL.match(expr) and defined.get(expr) == actual:
            continue
        if kind == "size" and _INTEGER.match(expr):
            continue  # a fixed size: the tensor guard checks it (`fixed_sizes`)
        if _SYMBOL.match(expr) and expr not in defined and counts[expr] == 1:
            continue  # a stride of its own: the kernels read it from the tensor
        tree = ast.parse(expr, mode="eval")
        _evaluate(tree.body, collections.defaultdict(int))  # only ints, names, +, -, *, **k
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        if not names <= defined.keys():
            return None
        wanted = ast.unparse(_Substitute(defined).visit(tree))
        test = f"{actual} == ({wanted})"
        tests.append(f"({arg.format(int(i))}.size({int(dim)}) <= 1 or {test})" if kind == "stride" else test)
    return tests


class _Substitute(ast.NodeTransformer):
    def __init__(self, defined: dict[str, str]) -> None:
        self._defined = defined

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.parse(self._defined[node.id], mode="eval").body


def _static(actual: Any, recorded: list) -> list:
    """The dims the guard fixes: the actual value where the record has a static one, None where it is symbolic."""
    return [value if want is not None else None for value, want in zip(actual, recorded)]


def inference(method: Callable) -> Callable:
    """CC-16: run without autograd, so outputs carry no graph."""
    set_grad = _SET_GRAD
    grad_enabled = torch.is_grad_enabled

    def call(*args: Any, **kwargs: Any) -> Any:
        previous = grad_enabled()
        set_grad(False)
        try:
            return method(*args, **kwargs)
        finally:
            set_grad(previous)

    return call
