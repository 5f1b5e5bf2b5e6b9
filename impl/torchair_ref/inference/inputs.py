"""What a cached graph assumes of its tensor inputs, checked on every call (SPEC CC-14, CC-15).

The record lists the graph's inputs (`tensor_spec.GraphInput`); a tensor's `TensorSpec` holds its dtype, device,
Python type, rank, the static sizes and strides (None where Dynamo made them symbolic), and for symbolic ones their
expressions: a symbol bound by one size or stride must agree wherever else it appears, and a compound expression
must evaluate to the actual value (the kernels index with them). `mismatch` is the full check in
Python (pure: it returns what does not fit, or None). `GraphInputCheck` runs the full check on the first call, then
builds PyTorch's C++ `TensorGuards` (`_torch.tensor_guards`, no Dynamo import) from the inputs that passed, with the
symbolic dims left free: later calls cost one C++ call, and only an input it rejects goes through the full check
again. A mismatch never reaches a kernel. `guaranteed_layouts` says which inputs' sizes and strides both paths fix
completely, so that the graph loader can leave out Inductor's own asserts of the same (`compilers.inductor`).
"""
from __future__ import annotations

import ast
import collections
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from torchair_ref import _torch
from torchair_ref.errors import TorchairRefError
from torchair_ref.inference.tensor_spec import INTEGER, SYMBOL, GraphInput, TensorSpec, evaluate

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


def mismatch(args: Sequence[Any], inputs: list[GraphInput]) -> Mismatch | None:
    """CC-15: the first input that does not fit its record, or None when all fit."""
    if len(args) != len(inputs):
        return Mismatch("type", f"the graph takes {len(inputs)} inputs, the call gave {len(args)}")
    for arg, graph_input in zip(args, inputs):
        if graph_input.tensor is None:
            found = graph_input.scalar_mismatch(arg)
        else:
            found = graph_input.tensor.type_mismatch(arg, graph_input.source)
        if found is not None:
            return Mismatch("type", found)
    return layout_mismatch(args, inputs)


def layout_mismatch(args: Sequence[Any], inputs: list[GraphInput]) -> Mismatch | None:
    """CC-15: the first dim whose size or stride does not fit, in the words of upstream's (and Inductor's)
    `assert_size_stride`: `expected size {actual}=={expected}, stride {actual}=={expected} at dim={i}`, with the
    concrete values the graph expects: a symbolic size or stride is evaluated with its symbols bound where the
    call's inputs first fix them (as the graph binds them from its size inputs)."""
    bound = _bindings(args, inputs)
    for arg, graph_input in zip(args, inputs):
        spec = graph_input.tensor
        if spec is None:
            continue
        size, stride = arg.size(), arg.stride()
        sizes = _expected(spec.shape, spec.exprs("size"), bound, size)
        strides = (_row_major(sizes) if spec.contiguous and arg.numel() > 1
                   else _expected(spec.stride, spec.exprs("stride"), bound, stride))
        for dim in range(len(size)):
            if size[dim] != sizes[dim] or (size[dim] > 1 and stride[dim] != strides[dim]):
                return Mismatch(
                    "layout",
                    f"expected size {size[dim]}=={sizes[dim]}, stride {stride[dim]}=={strides[dim]} at dim={dim} "
                    f"(input {graph_input.source}; the cache was compiled for other shapes: call with the cached "
                    "shapes, or delete its folder to recompile)",
                )
    if needs_symbolic_check(inputs) and not SymbolicCheck(inputs).ok(args):
        return Mismatch("layout", "the inputs' sizes and strides do not fit the graph's symbols")
    return None


def _bindings(args: Sequence[Any], inputs: list[GraphInput]) -> dict[str, int]:
    """Each plain symbol's value where the inputs first fix it (a stride of a dim of size 0 or 1 fixes nothing)."""
    bound: dict[str, int] = {}
    for i, kind, dim, expr in symbolic_terms(inputs):
        tensor = args[i]
        if SYMBOL.match(expr) and expr not in bound and (kind == "size" or tensor.size(dim) > 1):
            bound[expr] = tensor.size(dim) if kind == "size" else tensor.stride(dim)
    return bound


def _expected(static: Sequence[int | None], exprs: Sequence[str | None], bound: dict[str, int],
              actual: Sequence[int]) -> list[int]:
    """The sizes (or strides) the graph expects: the static ones, else their expression's value (the actual value
    where a symbol of it is fixed nowhere else, so that only a relation the inputs break is reported)."""
    values = []
    for dim, want in enumerate(static):
        expr = exprs[dim]
        if want is None and expr is not None:
            try:
                want = evaluate(expr, bound)
            except KeyError:
                want = actual[dim]
        values.append(actual[dim] if want is None else want)
    return values


def _row_major(size: Sequence[int]) -> list[int]:
    strides, step = [], 1
    for extent in reversed(size):
        strides.append(step)
        step *= max(extent, 1)
    return strides[::-1]


def symbolic_terms(inputs: list[GraphInput]) -> list[tuple[int, str, int, str]]:
    """(input, "size"/"stride", dim, expression) of every symbolic size and stride the check must relate (pure);
    the strides of a `contiguous` input are left out (`is_contiguous` checks them)."""
    terms = []
    for i, graph_input in enumerate(inputs):
        spec = graph_input.tensor
        if spec is None:
            continue
        for kind in ("size", "stride"):
            if kind == "stride" and spec.contiguous:
                continue
            for dim, expr in enumerate(spec.exprs(kind)):
                if expr is not None:
                    terms.append((i, kind, dim, expr))
    return terms


def needs_symbolic_check(inputs: list[GraphInput]) -> bool:
    """Whether a symbol is shared or an expression compound, i.e. the sizes and strides must agree (pure)."""
    seen: set[str] = set()
    for _, _, _, expr in symbolic_terms(inputs):
        if not SYMBOL.match(expr) or expr in seen:
            return True
        seen.add(expr)
    return False


class SymbolicCheck:
    """The relations between the graph's symbols, prepared once: `ok(args)` is the per-call test."""

    def __init__(self, inputs: list[GraphInput]) -> None:
        self._plan: list[tuple[int, bool, int, str, types.CodeType | None]] = []
        for i, kind, dim, expr in symbolic_terms(inputs):
            compiled = None if SYMBOL.match(expr) else compile(ast.parse(expr, mode="eval"), "<expr>", "eval")
            if compiled is not None:
                evaluate(expr, collections.defaultdict(int))  # only +, -, *, **k, ints
            self._plan.append((i, kind == "stride", dim, expr, compiled))

    def ok(self, args: Sequence[Any]) -> bool:
        bound: dict[str, int] = {}
        later: list[tuple[types.CodeType, int]] = []
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


class GraphInputCheck:
    """The compiled graph as the cached bytecode calls it: inputs checked on every call, then the kernels run with
    grad mode off (CC-16: outputs carry no graph; the bytecode around the graph only gathers inputs and packs
    outputs, so switching grad mode for the kernels alone is enough, and costs nothing under `torch.no_grad()`).

    `on_mismatch(m)` is called with an input that does not fit and must raise (an `AssertionError` for a size or
    stride, CC-15; `InputMismatchError` to recompile). `bind(scope, name)` names the global through which the
    bytecode calls the graph: each check that passes puts the fast call there, so the bytecode calls it directly.
    """

    def __init__(self, boxed: Callable[[list[Any]], Any], inputs: list[GraphInput],
                 on_mismatch: Callable[[Mismatch], None]) -> None:
        self._boxed = boxed
        self._inputs = inputs
        self._on_mismatch = on_mismatch
        self._tensor_at = [i for i, graph_input in enumerate(inputs) if graph_input.tensor is not None]
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

    def _fast_call(self, first: tuple[Any, ...]) -> Callable[..., Any]:
        """A call that checks with one C++ call, built from inputs that passed the full check: TensorGuards for
        dtype, device, rank, static sizes and strides; `is_contiguous` and the symbols' relations, as one
        expression generated from the record's (validated) integers and index names. It takes exactly as many
        positional arguments as the graph has inputs (the bytecode always passes them so)."""
        at = self._tensor_at
        tensors = [first[i] for i in at]
        specs = [spec for i in at if (spec := self._inputs[i].tensor) is not None]
        guards = _torch.tensor_guards()(
            *tensors,
            dynamic_dims_sizes=[_static(t.size(), spec.fixed_sizes()) for t, spec in zip(tensors, specs)],
            dynamic_dims_strides=[_static(t.stride(), spec.stride) for t, spec in zip(tensors, specs)],
        )
        params = ", ".join(f"a{i}" for i in range(len(self._inputs)))
        tests = ["check(" + ", ".join(f"a{i}" for i in at) + ")"]
        # a scalar input's type, as the full check found it (a tensor where the record says an int retraces)
        tests += [f"type(a{i}) is t{i}" for i in range(len(self._inputs)) if i not in at]
        tests += [f"a{i}.is_contiguous()" for i, spec in zip(at, specs) if spec.contiguous]
        relations = relation_tests(self._inputs, arg="a{}")
        namespace: dict[str, Any] = {
            "check": guards.check, "boxed": self._boxed, "slow": self._checked_call,
            "grad_enabled": torch.is_grad_enabled, "set_grad": _SET_GRAD, "type": type,
            **{f"t{i}": type(first[i]) for i in range(len(self._inputs)) if i not in at},
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
        fast_call: Callable[..., Any] = namespace["fast_call"]
        return fast_call


def without_grad(boxed: Callable[[list[Any]], Any], args: list[Any]) -> Any:
    """CC-16: run the graph's kernels with grad mode off, restoring the caller's mode."""
    if not torch.is_grad_enabled():
        return boxed(args)
    _SET_GRAD(False)
    try:
        return boxed(args)
    finally:
        _SET_GRAD(True)


def guaranteed_layouts(inputs: list[GraphInput]) -> list[tuple[list[int], list[int]] | None]:
    """CC-15: per graph input, the (sizes, strides) that `GraphInputCheck` makes sure of before any kernel runs
    (pure): those of a tensor whose every size (recorded or specialised by Dynamo, `TensorSpec.fixed_sizes`) and
    stride is
    static, or row-major: a `contiguous` tensor with every size fixed and none 0 (`is_contiguous()` on every call
    then leaves exactly the row-major strides); None for any other input. The stride of a dim of size 0 or 1 is not
    checked: no index reaches it (nor does `assert_size_stride` compare it)."""
    layouts: list[tuple[list[int], list[int]] | None] = []
    for graph_input in inputs:
        layouts.append(None if graph_input.tensor is None else _guaranteed(graph_input.tensor))
    return layouts


def _guaranteed(spec: TensorSpec) -> tuple[list[int], list[int]] | None:
    sizes = [size for size in spec.fixed_sizes() if size is not None]
    if len(sizes) < len(spec.shape):
        return None
    if None in spec.stride and spec.contiguous and 0 not in sizes:
        row_major = _row_major(sizes)
        if all(want in (None, got) for want, got in zip(spec.stride, row_major)):
            return sizes, row_major
    strides = [stride for stride in spec.stride if stride is not None]
    return (sizes, strides) if len(strides) == len(spec.stride) else None


def relation_tests(inputs: list[GraphInput], arg: str = "args[{}]") -> list[str] | None:
    """The symbols' relations as Python tests on the inputs (pure; input i is named `arg.format(i)`), or None when a
    symbol is only fixed by a stride and used again (then `SymbolicCheck` decides at run time)."""
    defined: dict[str, str] = {}
    for i, kind, dim, expr in symbolic_terms(inputs):
        if kind == "size" and SYMBOL.match(expr) and expr not in defined:
            defined[expr] = f"{arg.format(int(i))}.size({int(dim)})"
    tests = []
    counts = collections.Counter(
        name.id for _, _, _, expr in symbolic_terms(inputs) for name in ast.walk(ast.parse(expr, mode="eval"))
        if isinstance(name, ast.Name)
    )
    for i, kind, dim, expr in symbolic_terms(inputs):
        actual = f"{arg.format(int(i))}.{kind}({int(dim)})"
        if SYMBOL.match(expr) and defined.get(expr) == actual:
            continue
        if kind == "size" and INTEGER.match(expr):
            continue  # a fixed size: the tensor guard checks it (`TensorSpec.fixed_sizes`)
        if SYMBOL.match(expr) and expr not in defined and counts[expr] == 1:
            continue  # a stride of its own: the kernels read it from the tensor
        evaluate(expr, collections.defaultdict(int))  # only ints, names, +, -, *, **k
        tree = ast.parse(expr, mode="eval")
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


def _static(actual: Sequence[int], recorded: Sequence[int | None]) -> list[int | None]:
    """The dims the guard fixes: the actual value where the record has a static one, None where it is symbolic."""
    return [value if want is not None else None for value, want in zip(actual, recorded)]


def inference(method: Callable[..., Any]) -> Callable[..., Any]:
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
