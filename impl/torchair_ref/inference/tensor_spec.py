"""What a cached graph assumes of one tensor (SPEC CC-15, CC-17, CC-21), in one class: `TensorSpec`, used by the
record's graph inputs (`GraphInput`), the per-call input check (`inputs`) and Dynamo's TENSOR_MATCH on a module's
tensor (`guard_kinds.tensor`).

A spec holds the dtype, the device (with its index), the Python type where it was recorded, and per dim the static
size and stride (None where Dynamo made it symbolic) with, for symbolic ones, their expressions (`size_expr`,
`stride_expr`: "s0", "s1*s2"); `contiguous` marks symbolic strides that are row-major. Its JSON form is the record's
(written as before this class existed, so older files load); `from_json` refuses what `of` could not have written,
so that a broken file is rebuilt when it loads (CC-17), never fails at the first call.
"""
from __future__ import annotations

import ast
import collections
import re
from dataclasses import dataclass
from typing import Any

import torch

from torchair_ref.errors import BrokenCacheError, UncacheableError

SYMBOL = re.compile(r"^[a-z]+\d+\Z")
INTEGER = re.compile(r"^\d+\Z")
_MAX_EXPONENT = 8
#: the largest magnitude a recorded expression may reach, at every step, with each symbol 2 (`is_expression`): a
#: size or stride is an int64, and a bound on the degree keeps every later evaluation with real sizes small and fast
_LIMIT = 2**63

Dims = tuple[int | None, ...]
Exprs = tuple[str | None, ...]


@dataclass(frozen=True)
class TensorSpec:
    """One tensor as the graph was compiled for it; see the module's docstring for the fields."""

    dtype: str
    device: str
    shape: Dims
    stride: Dims
    pytype: str | None = None
    size_expr: Exprs | None = None
    stride_expr: Exprs | None = None
    contiguous: bool = False

    @classmethod
    def of(cls, value: torch.Tensor, pytype: str | None = None) -> TensorSpec:
        """The spec of a traced (possibly symbolic) tensor; UncacheableError for a symbolic size or stride whose
        expression a warm start cannot evaluate."""
        shape = tuple(d if isinstance(d, int) else None for d in value.shape)
        stride = tuple(s if isinstance(s, int) else None for s in value.stride())
        if None not in shape and None not in stride:
            return cls(str(value.dtype), str(value.device), shape, stride, pytype)
        size_expr = tuple(None if isinstance(d, int) else str(_expr(d)) for d in value.shape)
        stride_expr = tuple(None if isinstance(s, int) else str(_expr(s)) for s in value.stride())
        for expr in size_expr + stride_expr:
            if expr is not None and not is_expression(expr):
                raise UncacheableError(f"the symbolic size or stride {expr!r}, which a warm start cannot check")
        contiguous = None in stride and _symbolically_contiguous(value)
        return cls(str(value.dtype), str(value.device), shape, stride, pytype, size_expr, stride_expr, contiguous)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"dtype": self.dtype, "device": self.device, "shape": list(self.shape),
                                "stride": list(self.stride)}
        if self.pytype is not None:
            data["pytype"] = self.pytype
        if self.size_expr is not None and self.stride_expr is not None:
            data["size_expr"], data["stride_expr"] = list(self.size_expr), list(self.stride_expr)
        if self.contiguous:
            data["contiguous"] = True
        return data

    @classmethod
    def layout(cls, dtype: Any, device: Any, shape: Any, stride: Any) -> TensorSpec:
        """A spec of a dtype, device, sizes and strides alone (None: a dim not checked), as TENSOR_MATCH holds
        them; BrokenCacheError when no spec can hold them."""
        return _made(_checked_layout(dtype, device, shape, stride), device, shape, stride)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TensorSpec:
        """The spec `to_json` wrote; BrokenCacheError naming the field that no spec `of` writes could hold."""
        device: Any = data.get("device")
        shape: Any = data.get("shape")
        stride: Any = data.get("stride")
        name = _checked_layout(data.get("dtype"), device, shape, stride)
        exprs: dict[str, Exprs | None] = {}
        symbolic = None in shape or None in stride
        for key, dims in (("size_expr", shape), ("stride_expr", stride)):
            problem = _expressions_problem(data.get(key), dims, symbolic)
            if problem is not None:
                raise BrokenCacheError(f"an invalid {key}: {problem}")
            exprs[key] = None if data.get(key) is None else tuple(data[key])
        pytype, contiguous = data.get("pytype"), data.get("contiguous", False)
        if not (pytype is None or isinstance(pytype, str)) or not isinstance(contiguous, bool):
            raise BrokenCacheError(f"an invalid pytype or contiguous: {data!r:.200}")
        if contiguous and None not in stride:  # `of` marks only symbolic strides; static ones say it all
            raise BrokenCacheError(f"an invalid contiguous: the strides {stride} are all static")
        return _made(name, device, shape, stride, pytype, exprs["size_expr"], exprs["stride_expr"], contiguous)

    def type_mismatch(self, value: Any, name: str) -> str | None:
        """CC-15/CC-21: why `value` is not a tensor of this dtype, device, Python type and rank, or None."""
        if not isinstance(value, torch.Tensor):
            return f"input {name}: expected a tensor, got {type(value).__name__}"
        if str(value.dtype) != self.dtype:
            return f"input {name}: expected dtype {self.dtype}, got {value.dtype}"
        if value.device != torch.device(self.device):
            return f"input {name}: expected device {self.device}, got {value.device}"
        pytype = f"{type(value).__module__}.{type(value).__qualname__}"
        if self.pytype is not None and self.pytype != pytype:  # a file from before the type was recorded
            return f"input {name}: expected a {self.pytype}, got a {pytype}"
        if value.dim() != len(self.shape):
            return f"input {name}: expected {len(self.shape)} dims, got {value.dim()} ({list(value.size())})"
        return None

    def fits(self, value: Any) -> bool:
        """TENSOR_MATCH: `value` has this dtype, device, type and rank, and the static sizes, and the static strides
        of every dim longer than 1 (no index reaches the stride of a dim of size 0 or 1)."""
        if self.type_mismatch(value, "") is not None:
            return False
        for dim, (size, stride) in enumerate(zip(self.shape, self.stride)):
            if size is not None and value.size(dim) != size:
                return False
            if stride is not None and value.size(dim) > 1 and value.stride(dim) != stride:
                return False
        return True

    def fixed_sizes(self) -> list[int | None]:
        """The sizes as the guard fixes them (pure): the static ones, and symbolic ones whose expression is a plain
        integer (Dynamo specialised the symbol); None where the size is free."""
        return [want if want is not None else (int(expr) if expr is not None and INTEGER.match(expr) else None)
                for want, expr in zip(self.shape, self.exprs("size"))]

    def exprs(self, kind: str) -> Exprs:
        """The expressions of "size" or "stride" (None in every dim where there are none)."""
        found = self.size_expr if kind == "size" else self.stride_expr
        return found if found is not None else (None,) * len(self.shape)


def _checked_layout(dtype: Any, device: Any, shape: Any, stride: Any) -> str:
    """The name of `dtype` as `str(torch.float32)` writes it, where the four make a layout a spec can hold, else
    BrokenCacheError (pure, but for the names asked of torch once each: `_dtype_name`, `_is_device`)."""
    name = _dtype_name(dtype)
    if not (name is not None and isinstance(shape, list) and isinstance(stride, list) and len(shape) == len(stride)
            and all(d is None or (type(d) is int and d >= 0) for d in shape + stride)
            and isinstance(device, str) and _is_device(device)):
        raise BrokenCacheError(f"no valid dtype, shape, stride or device: {(dtype, device, shape, stride)!r:.200}")
    return name


def _dtype_name(dtype: Any) -> str | None:
    """`str()` of the torch dtype `dtype` names ("torch.float32" or "float32"), None when it names none; a str is
    looked up in torch once per process."""
    if type(dtype) is str and dtype in _DTYPES:
        return _DTYPES[dtype]
    found = getattr(torch, str(dtype).removeprefix("torch."), None)
    name = str(found) if isinstance(found, torch.dtype) else None
    if type(dtype) is str and len(_DTYPES) < 256:  # a damaged record's texts are not all kept
        _DTYPES[dtype] = name
    return name


_DTYPES: dict[str, str | None] = {}


def _made(dtype: str, device: str, shape: list[int | None], stride: list[int | None], pytype: str | None = None,
          size_expr: Exprs | None = None, stride_expr: Exprs | None = None, contiguous: bool = False) -> TensorSpec:
    """A spec of checked fields, made without the frozen dataclass's `__init__` (a record holds a spec per graph
    input and per module tensor, all read at every warm start)."""
    spec = object.__new__(TensorSpec)
    spec.__dict__.update(dtype=dtype, device=device, shape=tuple(shape), stride=tuple(stride), pytype=pytype,
                         size_expr=size_expr, stride_expr=stride_expr, contiguous=contiguous)
    return spec


#: the Python type a graph input of a symbolic kind arrives as: the frame passes the plain value
_RUNTIME_KIND = {"symint": "int", "symfloat": "float", "symbool": "bool"}


@dataclass(frozen=True)
class GraphInput:
    """One input of the compiled graph: where the cached bytecode reads it (`source`), its `role` (a user input, a
    parameter, a buffer, ...), its `kind` ("tensor", or the lower-cased Python type of a scalar) and, for a tensor,
    its `tensor` spec."""

    kind: str
    source: str
    role: str
    tensor: TensorSpec | None = None

    def __post_init__(self) -> None:
        if (self.kind == "tensor") != (self.tensor is not None):
            raise ValueError(f"a graph input of kind {self.kind!r} with tensor spec {self.tensor!r}")

    @classmethod
    def of(cls, source: str, role: str, value: Any, pytype: str | None = None) -> GraphInput:
        if isinstance(value, torch.Tensor):
            try:
                return cls("tensor", source, role, TensorSpec.of(value, pytype))
            except UncacheableError as exc:
                raise UncacheableError(f"input {source} has {exc}") from exc
        return cls(type(value).__name__.lower(), source, role)

    def scalar_mismatch(self, value: Any) -> str | None:
        """CC-15/CC-17: why `value` is not the scalar this input's kind names (a symbolic int, float or bool arrives
        as the plain Python value), or None; None for a tensor input (`TensorSpec.type_mismatch` checks those)."""
        if self.tensor is not None:
            return None
        expected = _RUNTIME_KIND.get(self.kind, self.kind)
        if type(value).__name__.lower() != expected:
            return f"input {self.source}: expected a value of type {expected}, got a {type(value).__name__}"
        return None

    def to_json(self) -> dict[str, Any]:
        head = {"kind": self.kind, "source": self.source, "role": self.role}
        return {**head, **self.tensor.to_json()} if self.tensor is not None else head

    @classmethod
    def from_json(cls, data: Any, index: int) -> GraphInput:
        """CC-17: the input `to_json` wrote, else BrokenCacheError naming it (checked when the file loads)."""
        if not (isinstance(data, dict) and all(isinstance(data.get(k), str) for k in ("kind", "source", "role"))):
            raise BrokenCacheError(f"recorded graph input {index} is not a description of an input: {data!r:.200}")
        if data["kind"] != "tensor":
            return cls(data["kind"], data["source"], data["role"])
        try:
            tensor = TensorSpec.from_json(data)
        except BrokenCacheError as exc:
            raise BrokenCacheError(f"recorded graph input {index} has {exc}") from exc
        made = object.__new__(cls)  # as `__init__` makes it, without its frozen fields' setattr (a record
        made.__dict__.update(kind="tensor", source=data["source"], role=data["role"], tensor=tensor)  # holds dozens)
        return made


def graph_inputs(described: Any) -> list[GraphInput]:
    """CC-17: the record's list of graph inputs, else BrokenCacheError."""
    if not isinstance(described, list):
        raise BrokenCacheError(f"the recorded graph inputs are a {type(described).__name__}, not a list")
    return [GraphInput.from_json(data, i) for i, data in enumerate(described)]


def evaluate(expr: str, values: dict[str, int]) -> int:
    """The integer value of a sum, difference or product of integers, symbols and their small integer powers
    (pure); ValueError for anything else (KeyError for a symbol `values` lacks)."""
    return _evaluate(ast.parse(expr, mode="eval").body, values)


def is_expression(expr: str) -> bool:
    """Whether `evaluate` accepts `expr` and, with every symbol 2, no step of it exceeds an int64 (pure): so its
    degree is below 64 and its constants fit, and evaluating it with real sizes (here, or as the Python the input
    check generates from it) stays quick and small, as a size or stride Dynamo writes always does."""
    if SYMBOL.match(expr):
        return True  # a symbol alone ("s0", the common case): a name, which evaluates to 2
    try:
        _evaluate(ast.parse(expr, mode="eval").body, collections.defaultdict(lambda: 2), _LIMIT)
    except (ValueError, SyntaxError, RecursionError, MemoryError):
        return False
    return True


def _evaluate(node: ast.AST, values: dict[str, int], limit: int | None = None) -> int:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return _within(node.value, limit)
    if isinstance(node, ast.Name):
        return int(values[node.id])
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult, ast.Sub)):
        left, right = _evaluate(node.left, values, limit), _evaluate(node.right, values, limit)
        return _within(left + right if isinstance(node.op, ast.Add) else left * right
                       if isinstance(node.op, ast.Mult) else left - right, limit)
    if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Constant)
            and type(node.right.value) is int and 0 <= node.right.value <= _MAX_EXPONENT):
        base = _evaluate(node.left, values, limit)  # sympy's s0**2 for a size that is a square
        return _within(int(base**node.right.value), limit)
    raise ValueError(f"unsupported expression {ast.unparse(node)!r}")


def _within(value: int, limit: int | None) -> int:
    if limit is not None and abs(value) > limit:
        raise ValueError(f"a value beyond {limit}")
    return value


def _is_device(text: Any) -> bool:
    """Whether `text` names a device torch knows (the per-call check builds `torch.device` from it); each text is
    asked of torch once per process (a record names the same device for every tensor)."""
    if not isinstance(text, str):
        return False
    known = _DEVICES.get(text)
    if known is None:
        try:
            torch.device(text)
            known = True
        except (RuntimeError, ValueError):
            known = False
        if len(_DEVICES) < 256:  # a damaged record's texts are not all kept
            _DEVICES[str.__str__(text)] = known
    return known


_DEVICES: dict[str, bool] = {}


def _expressions_problem(exprs: Any, dims: list[int | None], symbolic: bool) -> str | None:
    """What is wrong with a recorded list of symbolic sizes or strides, as `TensorSpec.of` writes it (pure): absent
    when no size or stride is `symbolic`, else one entry per dim, an expression `is_expression` accepts exactly
    where the dim is None."""
    if exprs is None:
        return "it is missing, but a size or stride is symbolic" if symbolic else None
    if not symbolic:
        return f"{exprs!r:.100} is recorded, but every size and stride is static"
    if not isinstance(exprs, list) or len(exprs) != len(dims):
        return f"{exprs!r:.100} is not a list of {len(dims)} entries"
    for expr, dim in zip(exprs, dims):
        if (expr is None) != (dim is not None):
            return (f"the static dim {dim} has the expression {expr!r:.100}" if dim is not None
                    else "a symbolic dim has no expression")
        if expr is not None and not isinstance(expr, str):
            return f"{expr!r:.100} is not an expression"
        if expr is not None and not is_expression(expr):
            return f"{expr!r:.100} is not an expression a warm start can check"
    return None


def _symbolically_contiguous(value: torch.Tensor) -> bool:
    """Whether a tensor with symbolic strides has exactly the row-major strides of its sizes (no guard is added)."""
    expected: Any = 1
    for size, stride in reversed(list(zip(value.shape, value.stride()))):
        if _expr(stride) != _expr(expected):
            return False
        expected = expected * size
    return True


def _expr(value: Any) -> Any:
    """A symbolic size's sympy expression (a static one as it is)."""
    node = getattr(value, "node", None)
    return node.expr if node is not None else value
