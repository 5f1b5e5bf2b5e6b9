"""How TorchAir's users wrap a model (SPEC CC-1, CC-14, CC-18), and the calls each pattern makes, deterministically.

- `plain`: the model inside a module whose `__init__` does `self.cached = cache_compile(self._run, **options)`
  (TorchAir's documented pattern); `_run` returns what the library's model returns (a `ModelOutput` dataclass for
  `transformers`, a tensor for `timm`).
- `served`: a causal language model served as TorchAir exists for: `prompt` (the whole prompt) and `decode` (one
  token) over a `transformers.StaticCache` that the caller creates and the methods fill in place, each method cached
  with `dynamic=True`, given the token positions as a server gives them (`position_ids`; a model left to infer them
  from a static cache reads its length from the cache's data, which OPT cannot trace as one graph). A static cache is
  how a model is served on an NPU: KV buffers allocated once, written in place (TorchAir's `scatter_update`), so every
  decode step sees the same layout. A `DynamicCache` does not under Inductor: its prompt graph returns the keys with a
  transposed view's strides (GPT-2: (512, 16, 64, 1); eager and the fast compiler return them contiguous, (512, 128,
  16, 1)), the first decode's `torch.cat` makes them contiguous, and the second decode fails Dynamo's stride guard, so
  even a plain `torch.compile` traces decode twice and CC-12 leaves decode uncached. `served-dynamic` is that pattern
  over a `DynamicCache` (`tests/zoo/test_zoo_models.py` checks CC-12 on it). A conversation feeds tokens drawn in
  advance (teacher forcing), never the argmax of the outputs, so a cached run and an eager run see the same inputs
  even where their logits differ in the last bits.
- `vllm`: vLLM-Ascend's TorchAir model runner (`vllm_ascend/torchair/torchair_model_runner.py` in
  vllm-project/vllm-ascend, `_get_torchair_lazy_compiled_model`): per graph batch size a proxy of the model's
  `forward` (`types.FunctionType(forward.__code__.replace(co_name=f"{cls}_forward_with_batch_size_{n}"), ...)`),
  bound with `__get__`, stored in the model's `__dict__` and passed to `cache_compile(proxy, dynamic=True,
  fullgraph=True, config=config, ge_cache=False)`: `fullgraph` is an extra keyword argument (CC-1).

A script is a list of steps; each step calls one cached method (or, for eager, the method itself) and its output is
kept. `script(pattern, name, phase)` gives the cold process's steps (`phase="cold"`) or the warm process's
(`"warm"`: the cold steps again, whose outputs must equal the cold run's bit for bit (CC-14), then steps with other
sequence lengths, cache lengths and batches than the cold process saw).
"""
from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from torchair_conformance.zoo import catalog, families, packages

__all__ = ["CachedDecoder", "CachedEncoder", "CachedVision", "ServedDecoder", "VllmStyleDecoder", "Step", "Built",
           "build", "script", "VLLM_BATCH_SIZES", "VARIANTS"]


class CachedDecoder(nn.Module):
    """A causal language model, its `_run` cached in `__init__` (`use_cache=False`: one full forward)."""

    def __init__(self, model: nn.Module, cache_compile: Callable, **options: Any) -> None:
        super().__init__()
        self.model = model
        self.cached = cache_compile(self._run, **options)

    def _run(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None) -> Any:
        return self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False)


class CachedEncoder(nn.Module):
    """An encoder (BERT, T5's encoder), its `_run` cached in `__init__`."""

    def __init__(self, model: nn.Module, cache_compile: Callable, **options: Any) -> None:
        super().__init__()
        self.model = model
        self.cached = cache_compile(self._run, **options)

    def _run(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None) -> Any:
        return self.model(input_ids=input_ids, attention_mask=attention_mask)


class CachedVision(nn.Module):
    """An image classifier, its `_run` cached in `__init__`."""

    def __init__(self, model: nn.Module, cache_compile: Callable, **options: Any) -> None:
        super().__init__()
        self.model = model
        self.cached = cache_compile(self._run, **options)

    def _run(self, images: torch.Tensor) -> torch.Tensor:
        return self.model(images)


class ServedDecoder(nn.Module):
    """A causal language model served with a KV cache: `prompt` and `decode`, each cached with `dynamic=True`."""

    def __init__(self, model: nn.Module, cache_compile: Callable, **options: Any) -> None:
        super().__init__()
        self.model = model
        options = {**options, "dynamic": True}
        self.cached_prompt = cache_compile(self.prompt, **options)
        self.cached_decode = cache_compile(self.decode, **options)

    def prompt(self, input_ids: torch.Tensor, position_ids: torch.Tensor, cache: Any) -> torch.Tensor:
        return self.model(input_ids=input_ids, position_ids=position_ids, cache=cache, use_cache=True).logits

    def decode(self, input_ids: torch.Tensor, position_ids: torch.Tensor, cache: Any) -> torch.Tensor:
        return self.model(input_ids=input_ids, position_ids=position_ids, cache=cache, use_cache=True).logits


class VllmStyleDecoder(nn.Module):
    """vLLM's own model classes have a plain `forward` (no decorators, so no closure), which its runner copies."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, position_ids=positions, use_cache=False).logits


#: the tokens a served conversation's KV cache holds (the longest script conversation is 16)
MAX_CACHE_LEN = 32

#: the graph batch sizes the vllm pattern compiles (vLLM-Ascend's `torchair_graph_batch_sizes` double from a start)
VLLM_BATCH_SIZES = (1, 2, 4)
_VLLM_TOKENS = 8


def vllm_compiled(model: nn.Module, batch_size: int, cache_compile: Callable, config: Any, cache_dir: Any) -> Any:
    """vLLM-Ascend's proxy forward for `batch_size`, stored in the model's `__dict__`, and its `cache_compile`."""
    name = f"{model.__class__.__name__}_forward_with_batch_size_{batch_size}"
    forward = model.forward
    proxy = types.FunctionType(forward.__code__.replace(co_name=name), forward.__globals__, name=name,
                               argdefs=forward.__defaults__)
    model.__dict__[name] = proxy.__get__(model, nn.Module)
    return cache_compile(model.__dict__[name], dynamic=True, fullgraph=True, cache_dir=cache_dir, config=config,
                         ge_cache=False)


@dataclasses.dataclass
class Step:
    """One call of a script: a label, the cached callable and the eager method it stands for, its arguments;
    `state` names a KV cache the call reads and fills (created by the script's `caches`)."""

    label: str
    method: str
    args: tuple
    kwargs: dict
    state: str | None = None


@dataclasses.dataclass
class Built:
    """A zoo model wrapped as `pattern` says: the wrapper module, and per method name the cached callable."""

    name: str
    pattern: str
    module: nn.Module
    cached: dict[str, Callable]

    def eager(self, method: str) -> Callable:
        """The method a cached callable wraps, called eagerly (the vllm pattern's proxies are copies of `forward`)."""
        return self.module.forward if self.pattern == "vllm" else getattr(self.module, method)

    def new_cache(self) -> Any:
        """An empty KV cache for the served patterns: `transformers.StaticCache` for the model's config, holding
        `MAX_CACHE_LEN` tokens (`served-dynamic`: a `transformers.DynamicCache`; see the module docstring)."""
        transformers, _ = packages.load()
        if self.pattern == "served-dynamic":
            return transformers.DynamicCache(config=self.module.model.config)
        return transformers.StaticCache(config=self.module.model.config, max_cache_len=MAX_CACHE_LEN)


def build(name: str, pattern: str, cache_compile: Callable | None, options: dict[str, Any], seed: int = 0) -> Built:
    """Zoo model `name` wrapped as `pattern`; `cache_compile` None wraps nothing (an eager process).

    `options` are `cache_compile`'s keyword arguments (`config`, `cache_dir`, ...; the plain pattern adds the
    entry's `dynamic` unless given, the served pattern forces `dynamic=True`)."""
    entry = catalog.entry(name)
    if pattern not in catalog.patterns_of(name):
        raise ValueError(f"zoo model {name} has no pattern {pattern!r}; it has {', '.join(catalog.patterns_of(name))}")
    model = families.build_model(name, seed)
    compile_ = cache_compile or _no_compile
    if pattern == "plain":
        wrapper = {"image": CachedVision, "encoder": CachedEncoder}.get(entry.kind, CachedDecoder)
        module = wrapper(model, compile_, **{"dynamic": entry.dynamic, **options})
        return Built(name, pattern, module, {"_run": module.cached})
    if pattern in ("served", "served-dynamic"):
        module = ServedDecoder(model, compile_, **options)
        return Built(name, pattern, module, {"prompt": module.cached_prompt, "decode": module.cached_decode})
    module = VllmStyleDecoder(model).eval()
    cached = {}
    for n in VLLM_BATCH_SIZES:
        method = f"{module.__class__.__name__}_forward_with_batch_size_{n}"
        cached[method] = (vllm_compiled(module, n, cache_compile, options.get("config"), options.get("cache_dir"))
                          if cache_compile else module.forward)
    return Built(name, pattern, module, cached)


def _no_compile(method: Callable, **_: Any) -> Callable:
    return method


#: warm-process variants that a cold trace's guards must reject (CC-21): `no_mask` calls a language model's plain
#: pattern without the `attention_mask` the cold process passed (argument structure: None versus a tensor)
VARIANTS = ("no_mask",)


def script(built: Built, phase: str, variant: str | None = None) -> list[Step]:
    """The steps of `phase` ("cold" or "warm") for a built model (see the module docstring); a `variant` (warm
    only) replaces the warm steps after the first by calls the cold trace's guards must reject."""
    entry = catalog.entry(built.name)
    if built.pattern == "plain":
        args, kwargs = families.inputs(built.name, entry.cold_shape, seed=1)
        steps = [Step("cold inputs", "_run", args, kwargs)]
        if phase == "warm" and variant == "no_mask":
            if "attention_mask" not in kwargs:
                raise ValueError(f"variant no_mask needs a language model's plain pattern, not {built.name}")
            return [*steps, Step("cold inputs without attention_mask", "_run", args, {})]
        if phase == "warm":
            steps.append(Step("cold inputs again", "_run", args, kwargs))
            if entry.dynamic:
                other_args, other_kwargs = families.inputs(built.name, entry.other_shape, seed=2)
                steps.append(Step(f"other shape {entry.other_shape}", "_run", other_args, other_kwargs))
        return steps
    if built.pattern in ("served", "served-dynamic"):
        steps = _conversation("first", prompt=8, decodes=2, seed=1)
        if phase == "warm":
            steps += _conversation("second", prompt=13, decodes=3, seed=2)
        return steps
    steps = []
    for n in VLLM_BATCH_SIZES:
        method = f"{built.module.__class__.__name__}_forward_with_batch_size_{n}"
        ids = families.tokens(n, _VLLM_TOKENS, seed=n)
        positions = torch.arange(_VLLM_TOKENS).expand(n, _VLLM_TOKENS)
        steps.append(Step(f"batch size {n}", method, (ids, positions), {}))
    return steps


def _conversation(label: str, prompt: int, decodes: int, seed: int) -> list[Step]:
    ids = families.tokens(1, prompt + decodes, seed)
    positions = torch.arange(prompt + decodes).unsqueeze(0)
    steps = [Step(f"{label} prompt ({prompt} tokens)", "prompt", (ids[:, :prompt], positions[:, :prompt]), {},
                  state=label)]
    for i in range(decodes):
        at = prompt + i
        steps.append(Step(f"{label} decode at cache length {at}", "decode",
                          (ids[:, at:at + 1], positions[:, at:at + 1]), {}, state=label))
    return steps
