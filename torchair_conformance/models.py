"""Modules and inputs built deterministically from JSON-able descriptions.

The same description builds the same module (structure, class name and parameter values) in the test process and
in a fresh worker process, which is what a warm start (CC-14) needs. Descriptions are drawn by ``strategies``.

A structure is ``{"class_name": str, "in_features": int, "layers": [layer, ...]}`` with layers
``{"kind": "linear", "out": int, "bias": bool}``, ``{"kind": "layernorm"}``, ``{"kind": "act", "fn": name}`` and
``{"kind": "residual", "layers": [...]}`` (shape-preserving inner layers, added to their input).
An input is ``{"shape": [...], "dtype": name, "seed": int, "layout": "contiguous"|"transposed"|"strided"}``.
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn

__all__ = [
    "ACTIVATIONS",
    "use_device",
    "device",
    "DTYPES",
    "METHODS",
    "build_module",
    "out_features",
    "make_input",
    "make_inputs",
    "digest",
    "InputMeta",
    "SeedModel",
    "SPECIAL_MODELS",
    "build_special",
    "special_args",
]

ACTIVATIONS = {"relu": nn.ReLU, "gelu": nn.GELU, "tanh": nn.Tanh, "silu": nn.SiLU, "sigmoid": nn.Sigmoid}
DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16, "float16": torch.float16,
          "int64": torch.int64, "int32": torch.int32, "int8": torch.int8, "uint8": torch.uint8}
# Method names a cached function may have: the name is the <func> level of the cache path (CC-8).
METHODS = ("forward", "decode", "prefill")
# The device modules and inputs are built on: the implementation's declared device (IMPL-2), set once per process
# by the suite's conftest and by each worker.
_DEVICE = ["cpu"]


def use_device(name: str) -> None:
    """Build every later module and input on ``name`` (``"cpu"``, ``"cuda"``, ``"npu"``)."""
    _DEVICE[0] = name


def device() -> str:
    """The device modules and inputs are built on."""
    return _DEVICE[0]


class Residual(nn.Module):
    def __init__(self, layers: nn.ModuleList) -> None:
        super().__init__()
        self.layers = layers

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x
        for layer in self.layers:
            y = layer(y)
        return x + y


class Stack(nn.Module):
    """A stack of layers; ``forward``, ``decode`` and ``prefill`` are the same computation under three names."""

    def __init__(self, layers: nn.ModuleList) -> None:
        super().__init__()
        self.layers = layers

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x

    def decode(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x

    def prefill(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


_CLASSES: dict[tuple[str, str], type] = {}


def _named_class(base: type, name: str) -> type:
    """A subclass of ``base`` called ``name``, created once per process (so ``type(m).__name__`` is ``name``)."""
    key = (base.__name__, name)
    if key not in _CLASSES:
        # Reachable by its qualified name, so that an instance pickles within the process (CC-24's copies).
        qualname = f"_{base.__name__}_named_{name}"
        _CLASSES[key] = globals()[qualname] = type(name, (base,), {"__module__": __name__, "__qualname__": qualname})
    return _CLASSES[key]


def _layers(specs: Sequence[Mapping[str, Any]], width: int) -> tuple[nn.ModuleList, int]:
    layers = []
    for spec in specs:
        kind = spec["kind"]
        if kind == "linear":
            layers.append(nn.Linear(width, spec["out"], bias=spec.get("bias", True)))
            width = spec["out"]
        elif kind == "layernorm":
            layers.append(nn.LayerNorm(width))
        elif kind == "act":
            layers.append(ACTIVATIONS[spec["fn"]]())
        elif kind == "residual":
            inner, inner_width = _layers(spec["layers"], width)
            if inner_width != width:
                raise ValueError(f"residual layers must preserve width {width}, got {inner_width}: {spec}")
            layers.append(Residual(inner))
        else:
            raise ValueError(f"unknown layer kind {kind!r} in {spec}")
    return nn.ModuleList(layers), width


def out_features(structure: Mapping[str, Any]) -> int:
    """The width of the stack's output."""
    width = structure["in_features"]
    for spec in structure["layers"]:
        if spec["kind"] == "linear":
            width = spec["out"]
    return width


def build_module(structure: Mapping[str, Any], seed: int, dtype: str = "float32") -> nn.Module:
    """The module that ``structure`` describes, with parameters drawn from ``seed``, in eval mode."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        layers, _ = _layers(structure["layers"], structure["in_features"])
        module = _named_class(Stack, structure["class_name"])(layers)
    return module.to(dtype=DTYPES[dtype], device=device()).eval()


def make_input(spec: Mapping[str, Any], on: str | None = None) -> torch.Tensor:
    """The tensor that ``spec`` describes; ``transposed``/``strided`` layouts give non-contiguous views."""
    shape = list(spec["shape"])
    gen = torch.Generator().manual_seed(spec["seed"])
    dtype = DTYPES[spec["dtype"]]
    target = on or device()
    layout = spec.get("layout", "contiguous")
    # Convert before taking the view: .to() of a non-dense view would return a contiguous copy.
    if layout == "contiguous":
        return torch.randn(shape, generator=gen).to(dtype=dtype, device=target)
    if layout == "transposed":
        if len(shape) < 2:
            raise ValueError(f"a transposed input needs at least 2 dims: {spec}")
        swapped = shape[:-2] + [shape[-1], shape[-2]]
        return torch.randn(swapped, generator=gen).to(dtype=dtype, device=target).transpose(-1, -2)
    if layout == "strided":
        wide = shape[:-1] + [shape[-1] * 2]
        return torch.randn(wide, generator=gen).to(dtype=dtype, device=target)[..., ::2]
    raise ValueError(f"unknown layout {layout!r} in {spec}")


def make_inputs(specs: Sequence[Mapping[str, Any]], on: str | None = None) -> list[torch.Tensor]:
    return [make_input(s, on) for s in specs]


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, torch.Tensor):
        return [value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [type(value).__qualname__] + _leaves([getattr(value, f.name) for f in dataclasses.fields(value)])
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    if isinstance(value, dict):
        return [leaf for k in sorted(value) for leaf in _leaves(value[k])]
    return [value]


def digest(value: Any) -> str:
    """A digest of an output structure: tensors by dtype, shape and exact bytes; other leaves by ``repr``."""
    h = hashlib.sha256()
    for leaf in _leaves(value):
        if isinstance(leaf, torch.Tensor):
            t = leaf.detach().cpu().contiguous()
            h.update(f"{t.dtype}{tuple(t.shape)}".encode())
            # numpy-free (torch's CPU wheel does not require it): the raw bytes via a uint8 view.
            h.update(bytes(t.reshape(-1).view(torch.uint8).tolist()))
        else:
            h.update(repr(leaf).encode())
    return h.hexdigest()


# --- Purpose-built modules for the input/output forms of CC-18 -------------------------------------------------


@dataclasses.dataclass
class InputMeta:
    """The seed example's dataclass input (TorchAir's documentation): a tensor and a flag."""

    data: torch.Tensor
    is_prompt: bool


class SeedModel(nn.Module):
    """The seed example of TorchAir's documentation: two ``Linear(2, 1)``, ``prompt`` and ``decode`` over an
    `InputMeta` and a list of tensors (the benchmark's ``tiny``; the reference's warm-start tests wrap it)."""

    def __init__(self) -> None:
        super().__init__()
        self.linear1 = nn.Linear(2, 1)
        self.linear2 = nn.Linear(2, 1)

    def _forward(self, x: InputMeta, kv: list[torch.Tensor]) -> torch.Tensor:
        return self.linear2(x.data) + self.linear2(kv[0])

    def prompt(self, x: InputMeta, kv: list[torch.Tensor]) -> torch.Tensor:
        return self._forward(x, kv)

    def decode(self, x: InputMeta, kv: list[torch.Tensor]) -> torch.Tensor:
        return self._forward(x, kv)


# A module-level global used by a method (CC-18: rebound on warm start, not frozen into the artifact).
GLOBAL_OFFSET = torch.zeros(1)


class KwargsNet(nn.Module):
    """Positional, keyword and keyword-only arguments, a dataclass, a list of tensors and a Python int."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x: torch.Tensor, meta: InputMeta, kv: list[torch.Tensor], step: int = 1, *,
                bias: torch.Tensor) -> tuple[torch.Tensor, int, torch.Size]:
        y = self.proj(x) * meta.data + bias
        for t in kv:
            y = y + t
        return y * step, step + 1, y.shape


class UnregisteredNet(nn.Module):
    """Tensors reached through ``self`` that are not parameters/buffers, a closure tensor and a module global."""

    def __init__(self, width: int, seed: int) -> None:
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        self.proj = nn.Linear(width, width)
        self.plain = torch.randn(width, generator=gen).to(device())
        closed = torch.randn(width, generator=gen).to(device())

        def shift(t: torch.Tensor) -> torch.Tensor:
            return t + closed

        self.shift = shift

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.shift(self.proj(x) + self.plain) + GLOBAL_OFFSET.to(x.device)


@dataclasses.dataclass
class ModelOutput:
    """A HuggingFace-style output dataclass (``transformers.modeling_outputs``): tensors, one of them optional."""

    last_hidden_state: torch.Tensor
    hidden_states: torch.Tensor | None = None


class Pair(collections.namedtuple("Pair", ["value", "flat"])):
    """A namedtuple output (subclassed, as libraries do to add methods)."""


class ViewsNet(nn.Module):
    """Outputs that alias the inputs: views (``view``, ``t``, a slice, ``view_as_real`` of a complex input), the input
    itself (``contiguous`` of a contiguous tensor), beside a computed one (CC-18: cached, and views in eager)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x: torch.Tensor, z: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return self.proj(x), x.view(-1), x.t(), x[1:], torch.view_as_real(z), x.contiguous()


class StructNet(nn.Module):
    """A dataclass (HuggingFace ``ModelOutput`` style) and a namedtuple as outputs (CC-18)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> tuple[ModelOutput, Pair]:
        h = self.proj(x)
        return ModelOutput(last_hidden_state=h, hidden_states=x * 2), Pair(h.sum(-1), x.view(-1))


SPECIAL_MODELS = ("kwargs", "unregistered", "views", "structs")


def build_special(name: str, width: int, seed: int) -> nn.Module:
    """One of the CC-18 modules, parameters drawn from ``seed``, in eval mode."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        module = {"kwargs": lambda: KwargsNet(width), "unregistered": lambda: UnregisteredNet(width, seed),
                  "views": lambda: ViewsNet(width), "structs": lambda: StructNet(width)}[name]()
    return module.to(device()).eval()


def special_args(name: str, width: int, batch: int, seed: int, step: int = 2) -> tuple[tuple, dict]:
    """Arguments for ``build_special(name, ...)``'s ``forward``: ``(args, kwargs)``."""
    gen = torch.Generator().manual_seed(seed)
    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen).to(device())

    x = randn(batch, width)
    if name == "kwargs":
        meta = InputMeta(data=randn(width), is_prompt=False)
        kv = [randn(batch, width) for _ in range(2)]
        return (x, meta, kv), {"step": step, "bias": randn(width)}
    if name == "views":
        return (x, torch.complex(randn(batch, width), randn(batch, width))), {}
    return (x,), {}
