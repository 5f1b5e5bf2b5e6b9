"""Models, calls and module states for the guard properties (SPEC CC-21, CC-22), built from JSON descriptions.

A case is ``{"kind": name, ...drawn numbers...}``; ``build(case, phase)`` makes the module, ``prepare(model, case,
phase)`` puts it in the phase's state (hooks, training, a monkeypatch) and ``calls(case, phase)`` gives the phase's
calls as ``(args, kwargs, context factory)``. Phase "cold" is what the cold trace saw; phase "warm" is what the cold
trace's guards reject. The same description gives the same module, state and calls in every process.
The code a helper is chosen from at import time reads ``$CONFORMANCE_GUARD_HELPER`` (CC-21 (f)).
"""

from __future__ import annotations

import contextlib
import os
import types
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import nn

__all__ = ["SIZE_KINDS", "STRUCTURE_KINDS", "VALUE_KINDS", "MODULE_KINDS", "BETWEEN_CALLS_KINDS", "MUTATING_KINDS",
           "build", "prepare", "calls"]

Call = tuple[tuple, dict[str, Any], Callable[[], Any]]

SIZE_KINDS = ("slice", "slice_int", "narrow", "branch", "squeeze", "empty")
STRUCTURE_KINDS = ("same_tensor", "none_then_tensor", "list_length", "tied")
VALUE_KINDS = ("int", "bool", "str")
MODULE_KINDS = ("hook_removed", "hook_added", "training", "default_dtype", "autocast", "monkeypatch",
                "import_helper", "attribute_flag", "config_flag")
#: methods that change the state their guards read (CC-21: guards are recorded from the state before the cold call)
MUTATING_KINDS = ("counter", "list_argument")
#: the module kinds whose change can come between two warm calls of one process (CC-21: checked on every call); a
#: replaced submodule changes `str(module)` and so, in a fresh process, the cache path (CC-8): between calls only
BETWEEN_CALLS_KINDS = ("hook_added", "training", "monkeypatch", "attribute_flag", "config_flag", "submodule_replaced")


class Config:
    """A module-level configuration object the traced code reads (`CONFIG.double`), as model code reads a config."""

    double = True


CONFIG = Config()


def _relu(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x)


def _sigmoid(x: torch.Tensor) -> torch.Tensor:
    return torch.sigmoid(x)


HELPER = _sigmoid if os.environ.get("CONFORMANCE_GUARD_HELPER") == "sigmoid" else _relu


class Sizes(nn.Module):
    """CC-21 (a): a symbolic size relation with the bound `bound` (`kind` picks which)."""

    def __init__(self, kind: str, bound: int) -> None:
        super().__init__()
        self.kind, self.bound = kind, bound

    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        if self.kind == "slice":
            return x[: self.bound] * 2
        if self.kind == "slice_int":
            return x[:n] + 1
        if self.kind == "narrow":
            return x.narrow(0, 0, self.bound) * 2
        if self.kind == "branch":
            return x * 2 if x.size(0) > self.bound else x - 1
        if self.kind == "squeeze":
            return x.squeeze() + 1
        return x.amax(0)


class Structured(nn.Module):
    """CC-21 (b): optional tensors and lists change the graph's inputs."""

    def forward(self, x: torch.Tensor, y: torch.Tensor = None, zs: list[torch.Tensor] = None) -> torch.Tensor:
        out = x * 2
        if y is not None:
            out = out + y
        for z in zs or ():
            out = out + z
        return out


class Tied(nn.Module):
    """CC-21 (b): an output head whose weight is the embedding's when `tied`; `str(module)` is the same."""

    def __init__(self, width: int, tied: bool) -> None:
        super().__init__()
        self.embed = nn.Embedding(8, width)
        self.head = nn.Linear(width, 8, bias=False)
        if tied:
            self.head.weight = self.embed.weight

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(ids))


class Valued(nn.Module):
    """CC-21 (c): an int, a bool and a str the graph specialises on."""

    def forward(self, x: torch.Tensor, k: int, flag: bool, mode: str) -> torch.Tensor:
        y = x * k
        y = y + 1 if flag else y - 1
        return torch.relu(y) if mode == "relu" else torch.sigmoid(y)


class Inner(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


class Hooked(nn.Module):
    """CC-21 (d)-(f): a submodule that hooks, training and monkeypatches reach, a helper chosen at import time, a
    tensor created in the default dtype, a bool attribute, a module-level config flag and a replaceable submodule."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.inner = Inner(width)
        self.bn = nn.BatchNorm1d(width)
        self.act = nn.ReLU()
        self.shift = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.act(self.bn(HELPER(self.inner(x))))
        if self.shift:
            y = y + 1
        if CONFIG.double:
            y = y * 2
        return y + torch.ones(x.shape[-1])


class Mutating(nn.Module):
    """CC-21: a method that changes what it reads: a counter it increments (`calls`, specialised as an int attribute
    of the module), or a list argument it appends to."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind
        self.calls = 0

    def forward(self, x: torch.Tensor, history: list[torch.Tensor] | None = None) -> torch.Tensor:
        if self.kind == "counter":
            self.calls += 1
            return x * self.calls
        history.append(x)
        return torch.stack(history).mean(0)


class SetConstant(nn.Module):
    """CC-22: a method holding a set constant (its iteration order follows PYTHONHASHSEED)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.name in {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}:
            return x * 2
        return x - 1


def _plus_one(module: nn.Module, args: Any, output: torch.Tensor) -> torch.Tensor:
    return output + 1


def _times_three(self: Inner, x: torch.Tensor) -> torch.Tensor:
    return self.fc(x) * 3


def build(case: Mapping[str, Any], phase: str) -> nn.Module:
    """The module of `case` (parameters from `case["seed"]`), in inference mode."""
    torch.manual_seed(case["seed"])
    kind = case["kind"]
    if kind in SIZE_KINDS:
        model: nn.Module = Sizes(kind, case["bound"])
    elif kind == "tied":
        model = Tied(case["width"], tied=phase == "cold")
    elif kind in STRUCTURE_KINDS:
        model = Structured()
    elif kind in VALUE_KINDS:
        model = Valued()
    elif kind in MODULE_KINDS or kind in BETWEEN_CALLS_KINDS:
        model = Hooked(case["width"])
    elif kind in MUTATING_KINDS:
        model = Mutating(kind)
    elif kind == "set_constant":
        model = SetConstant(case["name"])
    else:
        known = (SIZE_KINDS + STRUCTURE_KINDS + VALUE_KINDS + MODULE_KINDS + MUTATING_KINDS
                 + ("submodule_replaced", "set_constant"))
        raise ValueError(f"unknown guard case kind {kind!r}; known: {', '.join(known)}")
    return model.eval()


def prepare(model: nn.Module, case: Mapping[str, Any], phase: str) -> None:
    """Put the module in the phase's state: a hook only in one phase, a training submodule, a monkeypatch, a bool
    attribute, the module-level config flag, a replaced submodule."""
    kind = case["kind"]
    if (kind, phase) in (("hook_removed", "cold"), ("hook_added", "warm")):
        model.inner.fc.register_forward_hook(_plus_one)
    elif (kind, phase) == ("training", "warm"):
        model.bn.train()
    elif (kind, phase) == ("monkeypatch", "warm"):
        model.inner.forward = types.MethodType(_times_three, model.inner)
    elif (kind, phase) == ("attribute_flag", "warm"):
        model.shift = False
    elif (kind, phase) == ("submodule_replaced", "warm"):
        model.act = nn.Tanh()
    elif (kind, phase) == ("counter", "warm"):
        model.calls = 1  # the state the cold call left behind
    if kind == "config_flag":
        CONFIG.double = phase != "warm"


def _tensor(seed: int, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _context(case: Mapping[str, Any], phase: str) -> Callable[[], Any]:
    if (case["kind"], phase) == ("autocast", "warm"):
        return lambda: torch.autocast("cpu", dtype=torch.bfloat16)
    if (case["kind"], phase) == ("default_dtype", "warm"):
        return lambda: _default_dtype(torch.float64)
    return contextlib.nullcontext


@contextlib.contextmanager
def _default_dtype(dtype: torch.dtype):
    before = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(before)


def calls(case: Mapping[str, Any], phase: str) -> list[Call]:
    """The phase's call: its arguments from the drawn numbers (`rows`/`warm_rows`, `width`, `seed`, ...)."""
    kind, seed, width = case["kind"], case["seed"], case.get("width", 3)
    rows = case["rows"] if phase == "cold" else case.get("warm_rows", case["rows"])
    context = _context(case, phase)
    if kind in SIZE_KINDS:
        shape = (rows, 1, width) if kind == "squeeze" else (rows, width)
        return [((_tensor(seed, *shape), case["bound"]), {}, context)]
    a, b = _tensor(seed, rows, width), _tensor(seed + 1, rows, width)
    if kind == "same_tensor":
        return [((a, a if phase == "cold" else b), {}, context)]
    if kind == "none_then_tensor":
        return [((a,), {} if phase == "cold" else {"y": b}, context)]
    if kind == "list_length":
        count = case["length"] if phase == "cold" else case["warm_length"]
        return [((a,), {"zs": [_tensor(seed + 2 + i, rows, width) for i in range(count)]}, context)]
    if kind == "tied":
        return [((torch.arange(rows) % 8,), {}, context)]
    if kind == "list_argument":  # warm: a history holding what the cold call appended
        return [((a,), {"history": [] if phase == "cold" else [b]}, context)]
    if kind in VALUE_KINDS:
        values = {"k": 2, "flag": True, "mode": "relu"}
        if phase == "warm":
            values[{"int": "k", "bool": "flag", "str": "mode"}[kind]] = case["warm_value"]
        return [((a,), values, context)]
    return [((a,), {}, context)]
