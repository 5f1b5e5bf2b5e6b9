"""The benchmark models (see `presets`): built with seeded random weights, in eval mode, with their inputs.

`tiny` is the model zoo's seed example (`torchair_conformance.models.SeedModel`); the decoders are the benchmark's
own; any other model comes from the user's `package.module:factory` (`from_factory`)."""
from __future__ import annotations

import importlib
import math
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from torchair_conformance.bench import presets
from torchair_conformance.errors import ConformanceError
from torchair_conformance.models import InputMeta, SeedModel


class GptBlock(nn.Module):
    """Pre-LayerNorm block: causal multi-head attention and a GELU MLP."""

    def __init__(self, p: presets.Preset) -> None:
        super().__init__()
        self.heads = p.heads
        self.ln1 = nn.LayerNorm(p.d_model)
        self.qkv = nn.Linear(p.d_model, 3 * p.d_model)
        self.proj = nn.Linear(p.d_model, p.d_model)
        self.ln2 = nn.LayerNorm(p.d_model)
        self.fc = nn.Linear(p.d_model, p.ffn)
        self.out = nn.Linear(p.ffn, p.d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class Gpt(nn.Module):
    """`gpt-small`: token and learned position embeddings, pre-LN blocks, a final LayerNorm and an LM head."""

    def __init__(self, p: presets.Preset) -> None:
        super().__init__()
        self.tokens = nn.Embedding(p.vocab, p.d_model)
        self.positions = nn.Embedding(p.seq, p.d_model)
        self.blocks = nn.ModuleList(GptBlock(p) for _ in range(p.layers))
        self.ln = nn.LayerNorm(p.d_model)
        self.head = nn.Linear(p.d_model, p.vocab, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(idx.shape[1], device=idx.device)
        x = self.tokens(idx) + self.positions(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


class RmsNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        normed = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps)
        return normed.type_as(x) * self.weight


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class LlamaBlock(nn.Module):
    """RMSNorm, grouped-query attention with rotary embedding, SwiGLU MLP."""

    def __init__(self, p: presets.Preset) -> None:
        super().__init__()
        self.heads, self.kv_heads = p.heads, p.kv_heads or p.heads
        self.head_dim = p.d_model // p.heads
        self.attn_norm = RmsNorm(p.d_model)
        self.wq = nn.Linear(p.d_model, p.heads * self.head_dim, bias=False)
        self.wk = nn.Linear(p.d_model, self.kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(p.d_model, self.kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(p.heads * self.head_dim, p.d_model, bias=False)
        self.mlp_norm = RmsNorm(p.d_model)
        self.gate = nn.Linear(p.d_model, p.ffn, bias=False)
        self.up = nn.Linear(p.d_model, p.ffn, bias=False)
        self.down = nn.Linear(p.ffn, p.d_model, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        h = self.attn_norm(x)
        q = self.wq(h).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.wk(h).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(h).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = _rotate(q, cos, sin), _rotate(k, cos, sin)
        groups = self.heads // self.kv_heads
        k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.wo(y.transpose(1, 2).reshape(b, t, -1))
        h = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Llama(nn.Module):
    """A Llama-style decoder; the rotary tables are buffers (not saved in a state dict)."""

    def __init__(self, p: presets.Preset) -> None:
        super().__init__()
        self.embed = nn.Embedding(p.vocab, p.d_model)
        self.blocks = nn.ModuleList(LlamaBlock(p) for _ in range(p.layers))
        self.norm = RmsNorm(p.d_model)
        self.head = nn.Linear(p.d_model, p.vocab, bias=False)
        cos, sin = rotary_tables(p)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        t = idx.shape[1]
        cos, sin = self.cos[:t].to(self.head.weight.dtype), self.sin[:t].to(self.head.weight.dtype)
        x = self.embed(idx)
        for block in self.blocks:
            x = block(x, cos, sin)
        return self.head(self.norm(x))


def _llama(p: presets.Preset, device: str) -> nn.Module:
    """A Llama preset with seeded random weights, allocated in its dtype on the CPU (never float32 first: llama-7b is
    14 GB in bfloat16), filled in place, then moved to `device`.

    Not built on the `meta` device: initialising meta tensors runs PyTorch's Python reference kernels, which import
    Dynamo, and a benchmark process that imported Dynamo looks as if it traced (CC-14), its eager baseline included.
    """
    previous = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, p.dtype))
    try:
        module = Llama(p)
    finally:
        torch.set_default_dtype(previous)
    with torch.no_grad():
        for name, param in module.named_parameters():
            if name.endswith("bias"):
                param.zero_()
            elif param.dim() == 1:
                param.fill_(1.0)
            else:
                param.normal_(0.0, 1.0 / math.sqrt(param.shape[-1]))
    return module.to(device)


@dataclass
class Built:
    """A built benchmark model: the module, the method to cache, and the call's inputs."""

    module: nn.Module
    method: str
    args: tuple
    kwargs: dict[str, Any]

    def bound(self) -> Any:
        return getattr(self.module, self.method)


def build(name: str, *, device: str = "cpu", seed: int = 0) -> Built:
    """The model `name` (see `presets`) with seeded weights, in eval mode, and its inputs on `device`."""
    name = presets.canonical(name)
    if presets.is_factory(name):
        return from_factory(name, device=device, seed=seed)
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed + 1)
    if name == "tiny":
        module = SeedModel().to(device).eval()
        x = InputMeta(torch.randn(2, 2, generator=generator).to(device), True)
        return Built(module, "prompt", (x, [torch.randn(2, 2, generator=generator).to(device)]), {})
    p = presets.GPT_SMALL if name == "gpt-small" else presets.LLAMA[name]
    if name == "gpt-small":
        module = Gpt(p).to(device).eval()
    else:
        module = _llama(p, device).eval()
    idx = torch.randint(0, p.vocab, (1, p.seq), generator=generator).to(device)
    return Built(module, "forward", (idx,), {})


def rotary_tables(p: presets.Preset) -> tuple[torch.Tensor, torch.Tensor]:
    """The rotary embedding's cos and sin tables, (seq, head_dim), float32."""
    head_dim = p.d_model // p.heads
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    angles = torch.outer(torch.arange(p.seq, dtype=torch.float32), inv_freq)
    angles = torch.cat((angles, angles), dim=-1)
    return angles.cos(), angles.sin()


class ModelError(ConformanceError, ValueError):
    """`--model package.module:factory` breaks the contract of `from_factory`; the message says how."""


def from_factory(target: str, *, device: str = "cpu", seed: int = 0) -> Built:
    """`--model package.module:factory`: benchmark your own model (BE-1 measures it like a preset).

    The contract:

    - `package.module` is importable in the benchmark's processes (installed, or on `PYTHONPATH`; the working
      folder counts) and `factory` is a function in it, called with no arguments, after `torch.manual_seed(seed)`,
      once in every fresh process the benchmark starts (its time is part of the `build` phase).
    - It returns a tuple `(module, method, args)` or `(module, method, args, kwargs)`: `module` a
      `torch.nn.Module` (built on the CPU: the benchmark moves it to the device and calls `.eval()`); `method` the
      name of the method to cache and time (`"forward"`, or e.g. `"prompt"`: `cache_compile` takes a bound method,
      CC-2); `args` a tuple or list of the call's positional arguments and `kwargs` a dict of its keyword
      arguments (tensors in them, also inside lists, tuples and dicts, are moved to the device).
    - It is deterministic: the same weights and inputs in every process (seed torch's generators, read no clock),
      since a warm run's output must equal its cold run's bit for bit (CC-14).

    Raises `ModelError` naming the target and what is wrong.
    """
    if target.startswith("hf:"):
        return from_zoo(target, device=device, seed=seed)
    module_name, _, function_name = target.partition(":")
    try:
        owner = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - ImportError, or whatever the user's module raises at import
        raise ModelError(f"--model {target}: cannot import {module_name!r}: {exc!r}; the module must be installed or "
                         f"on PYTHONPATH (the working folder counts)") from exc
    factory = getattr(owner, function_name, None)
    if not callable(factory):
        raise ModelError(f"--model {target}: {module_name} has no function {function_name!r}"
                         + (f" (it is a {type(factory).__name__})" if factory is not None else ""))
    torch.manual_seed(seed)
    try:
        made = factory()
    except Exception as exc:  # noqa: BLE001 - the user's code: its error, named
        raise ModelError(f"--model {target}: {function_name}() raised {exc!r}") from exc
    if not isinstance(made, tuple) or len(made) not in (3, 4):
        raise ModelError(f"--model {target}: {function_name}() must return (module, method, args) or (module, method, "
                         f"args, kwargs), got {_describe(made)}")
    module, method, args, kwargs = made if len(made) == 4 else (*made, {})
    if not isinstance(module, nn.Module):
        raise ModelError(f"--model {target}: the module it returns must be a torch.nn.Module, got {_describe(module)}")
    if not isinstance(method, str) or not callable(getattr(module, method, None)):
        raise ModelError(f"--model {target}: the method it returns must name a method of {type(module).__name__} "
                         f"(e.g. 'forward'), got {method!r}")
    if not isinstance(args, (tuple, list)) or not isinstance(kwargs, dict):
        raise ModelError(f"--model {target}: the inputs it returns must be a tuple or list of positional arguments "
                         f"(and a dict of keyword arguments), got {_describe(args)} and {_describe(kwargs)}")
    return Built(module.to(device).eval(), method, tuple(_to(a, device) for a in args),
                 {k: _to(v, device) for k, v in kwargs.items()})


def from_zoo(target: str, *, device: str = "cpu", seed: int = 0) -> Built:
    """`--model hf:<name>` (issue 29 item 5): a real `transformers` or `timm` model of the zoo
    (`torchair_conformance.zoo.catalog`), built from its local config with random weights drawn from `seed` (nothing
    downloaded), cached as its users cache it (the plain pattern's `_run`), on its cold inputs."""
    from torchair_conformance.zoo import catalog, families, packages, patterns

    name = target.removeprefix("hf:")
    if name not in catalog.NAMES:
        raise ModelError(f"--model {target}: not a zoo model; known: {', '.join('hf:' + n for n in catalog.NAMES)}")
    missing = packages.missing()
    if missing is not None:
        raise ModelError(f"--model {target}: {missing}")
    built = patterns.build(name, "plain", None, {}, seed)
    args, kwargs = families.inputs(name, catalog.entry(name).cold_shape, seed)
    return Built(built.module.to(device).eval(), "_run", tuple(_to(a, device) for a in args),
                 {k: _to(v, device) for k, v in kwargs.items()})


def _to(value: Any, device: str) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple takes its fields one by one
        return type(value)(*(_to(v, device) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(_to(v, device) for v in value)
    if isinstance(value, dict):
        return {k: _to(v, device) for k, v in value.items()}
    return value


def _describe(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:60] + '...' if len(text) > 60 else text}"
