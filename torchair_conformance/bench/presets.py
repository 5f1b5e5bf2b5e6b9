"""The benchmark models by name (pure data; `models` builds them).

`tiny` is the seed example of TorchAir's documentation: two `Linear(2, 1)` with `prompt`/`decode`, where per-call
overhead dominates. `gpt-small` is a small pre-LayerNorm GPT. `llama-*` are Llama-style decoders (RMSNorm, rotary
embedding, SwiGLU, grouped-query attention) from a few MB (`llama-xs`, alias `llama`) to 7B-class (`llama-7b`, for
nightly runs on big devices). Weights are random (seeded); nothing is downloaded.

Any other model is named `package.module:factory` (see `torchair_conformance.bench.models.from_factory` for the
contract).
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Preset:
    """A decoder's sizes; `seq` is the length of the benchmark's input, batch 1."""

    vocab: int
    d_model: int
    layers: int
    heads: int
    ffn: int
    seq: int = 64
    kv_heads: int | None = None
    dtype: str = "float32"

    def parameters(self) -> int:
        """Parameter count, for the CLI's listing and the report."""
        kv = self.kv_heads or self.heads
        head_dim = self.d_model // self.heads
        attention = self.d_model * self.d_model * 2 + 2 * self.d_model * kv * head_dim
        return 2 * self.vocab * self.d_model + self.layers * (attention + 3 * self.d_model * self.ffn)


GPT_SMALL = Preset(vocab=1000, d_model=256, layers=4, heads=4, ffn=1024, seq=64)

LLAMA: dict[str, Preset] = {
    "llama-xs": Preset(vocab=1000, d_model=128, layers=2, heads=4, kv_heads=2, ffn=352, seq=64),
    "llama-s": Preset(vocab=8000, d_model=512, layers=8, heads=8, kv_heads=4, ffn=1408, seq=128),
    # 125M parameters, 12 layers (GPT-2 small's and SmolLM-135M's class): the smallest real language model, and the
    # nightly's realistic one. On a 2-core CPU shared at load average ~10, one round of every variant took 25 min
    # (Inductor's cold compile 7.5 min of it; the warm start 36 s against eager's 27 s); an NPU runner is far faster.
    "llama-125m": Preset(vocab=32000, d_model=768, layers=12, heads=12, kv_heads=4, ffn=2048, seq=128),
    "llama-1b": Preset(vocab=32000, d_model=2048, layers=22, heads=32, kv_heads=4, ffn=5632, seq=128,
                       dtype="bfloat16"),
    "llama-7b": Preset(vocab=32000, d_model=4096, layers=32, heads=32, kv_heads=8, ffn=14336, seq=128,
                       dtype="bfloat16"),
}
ALIASES = {"llama": "llama-xs"}

#: model name -> the method that is cached and benchmarked
METHODS = {"tiny": "prompt", "gpt-small": "forward", **{name: "forward" for name in LLAMA}}
NAMES = tuple(METHODS) + tuple(ALIASES)


#: `package.module:factory`: a user's own model (dotted module path, a colon, a function name)
_FACTORY = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")
#: `hf:<zoo model>`: a real `transformers` or `timm` model of the zoo (`torchair_conformance.zoo.catalog`)
_ZOO = re.compile(r"^hf:[a-z0-9][a-z0-9-]*$")


def is_factory(name: str) -> bool:
    """Whether `name` is built by a function in the benchmark's processes rather than a preset: a user's own model,
    `package.module:factory`, or a zoo model, `hf:<name>` (`models.from_zoo`)."""
    return bool(_FACTORY.match(name) or _ZOO.match(name))


def canonical(name: str) -> str:
    """The model's canonical name (a preset's, or `package.module:factory` as given); raises `ValueError` naming the
    closest preset, the known ones and the factory form."""
    name = ALIASES.get(name, name)
    if name in METHODS or is_factory(name):
        return name
    close = difflib.get_close_matches(name, NAMES, n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    raise ValueError(f"unknown benchmark model {name!r}; {hint}known: {', '.join(NAMES)}, a real model of the zoo as "
                     f"hf:<name> (e.g. hf:gpt2), or your own model as package.module:factory "
                     f"(python -m torchair_conformance bench --help)")
