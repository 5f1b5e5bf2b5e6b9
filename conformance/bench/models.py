"""The benchmark models (see `presets`): built with seeded random weights, in eval mode, with their inputs.

`tiny` is the model zoo's seed example (`conformance.models.SeedModel`); the decoders are the benchmark's own."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from conformance.bench import presets
from conformance.models import InputMeta, SeedModel


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


def _random_weights(module: nn.Module, dtype: torch.dtype, device: str) -> nn.Module:
    """Seeded random weights without PyTorch's slow per-layer init: built on `meta`, then filled in place."""
    module = module.to_empty(device=device).to(dtype)
    with torch.no_grad():
        for name, param in module.named_parameters():
            if name.endswith("bias"):
                param.zero_()
            elif param.dim() == 1:
                param.fill_(1.0)
            else:
                param.normal_(0.0, 1.0 / math.sqrt(param.shape[-1]))
    return module


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
        with torch.device("meta"):
            module = Llama(p)
        module = _random_weights(module, getattr(torch, p.dtype), device).eval()
        # `to_empty` left the rotary buffers uninitialised (and `to(dtype)` cast them): compute them again.
        cos, sin = rotary_tables(p)
        module.cos, module.sin = cos.to(device), sin.to(device)
    idx = torch.randint(0, p.vocab, (1, p.seq), generator=generator).to(device)
    return Built(module, "forward", (idx,), {})


def rotary_tables(p: presets.Preset) -> tuple[torch.Tensor, torch.Tensor]:
    """The rotary embedding's cos and sin tables, (seq, head_dim), float32."""
    head_dim = p.d_model // p.heads
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    angles = torch.outer(torch.arange(p.seq, dtype=torch.float32), inv_freq)
    angles = torch.cat((angles, angles), dim=-1)
    return angles.cos(), angles.sin()
