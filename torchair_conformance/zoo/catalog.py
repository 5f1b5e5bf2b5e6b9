"""The real-model zoo's entries, as data: which library class, which small config, which inputs (pure; nothing here
imports torch, `transformers` or `timm`).

Every model is built from the config written here, with random weights drawn after `torch.manual_seed(seed)`;
nothing is downloaded. Sizes are small so that a cold Inductor compile of one model takes tens of seconds on a CPU:
2 layers, hidden size 64, 4 heads (2 key/value heads where the family has grouped-query attention), vocabulary
1000, 4 experts with 2 per token for the Mixture-of-Experts models; the vision models are timm's smallest variants at
32x32 or 64x64 pixels with 10 classes.

`tier` says where a model runs: `ci` (the slice CI can afford: GPT-2, Llama and one timm model) or `nightly` (the
rest of the zoo: `tox -e zoo` runs every tier; the suite's `test_zoo.py` runs `nightly` models only under the
`nightly` hypothesis profile).
"""
from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping
from typing import Any

__all__ = ["Entry", "ENTRIES", "NAMES", "LANGUAGE", "VISION", "DECODERS", "PATTERNS", "entry", "patterns_of"]

#: the vocabulary every language model is built with (token ids are drawn below it)
VOCAB = 1000


@dataclasses.dataclass(frozen=True)
class Entry:
    """One zoo model: the library (`transformers` or `timm`), the class or timm name, its config, its inputs."""

    name: str
    library: str
    #: `transformers`: the config class and the model class (by name in `transformers`); `timm`: the model name
    config_class: str
    model_class: str
    config: Mapping[str, Any]
    #: language models: `decoder` (causal LM, also served with a KV cache) or `encoder`; vision: `image`
    kind: str
    tier: str = "nightly"
    #: `cache_compile`'s `dynamic` for the plain pattern
    dynamic: bool = True
    #: language models: (batch, sequence) of the cold call and of the warm process's other call; vision: (batch,
    #: pixels) likewise
    cold_shape: tuple[int, int] = (2, 16)
    other_shape: tuple[int, int] = (3, 11)
    #: inputs the plain pattern passes besides the tokens: `attention_mask` (as a tokenizer's output has it)
    attention_mask: bool = True


def _lm(name: str, config_class: str, model_class: str, kind: str = "decoder", tier: str = "nightly",
        **config: Any) -> Entry:
    return Entry(name, "transformers", config_class, model_class, config, kind, tier)


_IDS = {"bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0}
_LLAMA_LIKE = {"vocab_size": VOCAB, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
               "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 256, **_IDS}

ENTRIES: dict[str, Entry] = {e.name: e for e in (
    _lm("gpt2", "GPT2Config", "GPT2LMHeadModel", tier="ci", vocab_size=VOCAB, n_positions=256, n_embd=64, n_layer=2,
        n_head=4, bos_token_id=1, eos_token_id=2),
    dataclasses.replace(
        _lm("gpt2-static", "GPT2Config", "GPT2LMHeadModel", vocab_size=VOCAB, n_positions=256, n_embd=64, n_layer=2,
            n_head=4, bos_token_id=1, eos_token_id=2),
        dynamic=False, kind="decoder-static"),
    _lm("bert", "BertConfig", "BertModel", kind="encoder", vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=128, max_position_embeddings=256, pad_token_id=0),
    _lm("llama", "LlamaConfig", "LlamaForCausalLM", tier="ci", **_LLAMA_LIKE),
    _lm("qwen2", "Qwen2Config", "Qwen2ForCausalLM", **_LLAMA_LIKE),
    _lm("qwen3", "Qwen3Config", "Qwen3ForCausalLM", head_dim=16, **_LLAMA_LIKE),
    _lm("mistral", "MistralConfig", "MistralForCausalLM", **_LLAMA_LIKE),
    _lm("opt", "OPTConfig", "OPTForCausalLM", vocab_size=VOCAB, hidden_size=64, word_embed_proj_dim=64,
        num_hidden_layers=2, num_attention_heads=4, ffn_dim=128, max_position_embeddings=256, **_IDS),
    _lm("gpt-neox", "GPTNeoXConfig", "GPTNeoXForCausalLM", vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=128, max_position_embeddings=256, rotary_pct=0.25, **_IDS),
    _lm("t5-encoder", "T5Config", "T5EncoderModel", kind="encoder", vocab_size=VOCAB, d_model=64, d_kv=16, d_ff=128,
        num_layers=2, num_heads=4, pad_token_id=0, eos_token_id=1),
    # found outside the zoo (2026-11-28): each was refused by `dynamo_export` (Falcon: `mul.Scalar`,
    # `_safe_softmax`; BLOOM: `arange.start`, `pow.Tensor_Tensor`, `baddbmm` of its ALiBi bias; RoBERTa: `ne.Scalar`
    # of its position ids)
    _lm("falcon", "FalconConfig", "FalconForCausalLM", vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2,
        num_attention_heads=4, **_IDS),
    _lm("bloom", "BloomConfig", "BloomForCausalLM", vocab_size=VOCAB, hidden_size=64, n_layer=2, n_head=4, **_IDS),
    _lm("roberta", "RobertaConfig", "RobertaModel", kind="encoder", vocab_size=VOCAB, hidden_size=64,
        num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, max_position_embeddings=256, pad_token_id=1),
    # Mixture-of-Experts (2026-11-28): both were refused by `dynamo_export` (their experts' `grouped_mm` path:
    # `sort`, `histc`, `floor_divide`, `index_put`, `empty_like` and transformers' own `grouped_mm_fallback`)
    _lm("mixtral", "MixtralConfig", "MixtralForCausalLM", num_local_experts=4, num_experts_per_tok=2, **_LLAMA_LIKE),
    _lm("qwen2-moe", "Qwen2MoeConfig", "Qwen2MoeForCausalLM", num_experts=4, num_experts_per_tok=2,
        moe_intermediate_size=64, shared_expert_intermediate_size=128, **_LLAMA_LIKE),
    Entry("resnet18", "timm", "", "resnet18", {"num_classes": 10}, "image", tier="ci", cold_shape=(2, 64),
          other_shape=(3, 64)),
    Entry("vit-tiny", "timm", "", "vit_tiny_patch16_224", {"num_classes": 10, "img_size": 32, "patch_size": 8},
          "image", cold_shape=(2, 32), other_shape=(3, 32)),
    Entry("convnext-atto", "timm", "", "convnext_atto", {"num_classes": 10}, "image", cold_shape=(2, 32),
          other_shape=(3, 32)),
    Entry("efficientnet-b0", "timm", "", "efficientnet_b0", {"num_classes": 10}, "image", cold_shape=(2, 32),
          other_shape=(3, 32)),
    Entry("mobilenetv3-small", "timm", "", "mobilenetv3_small_050", {"num_classes": 10}, "image",
          cold_shape=(2, 32), other_shape=(3, 32)),
)}

NAMES = tuple(ENTRIES)
LANGUAGE = tuple(n for n, e in ENTRIES.items() if e.library == "transformers")
VISION = tuple(n for n, e in ENTRIES.items() if e.library == "timm")
#: the causal language models that are also served: a prompt method and a decode method over a KV cache
DECODERS = tuple(n for n, e in ENTRIES.items() if e.kind == "decoder")

#: how a model is wrapped and called (see `torchair_conformance.zoo.patterns`): `plain` (one cached method over the
#: model, every entry), `served` (prompt + decode with a static KV cache, the decoders), `served-dynamic` (the same
#: over a `DynamicCache`, whose layout change makes decode recompile: CC-12), `vllm` (vLLM-Ascend's per-batch-size
#: proxy forwards, the decoders)
PATTERNS = ("plain", "served", "served-dynamic", "vllm")


def entry(name: str) -> Entry:
    """The entry called `name`; `ValueError` naming the closest one and every known name."""
    if name in ENTRIES:
        return ENTRIES[name]
    close = difflib.get_close_matches(name, NAMES, n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    raise ValueError(f"unknown zoo model {name!r}; {hint}known: {', '.join(NAMES)}")


def patterns_of(name: str) -> tuple[str, ...]:
    """The patterns model `name` is run with."""
    return PATTERNS if entry(name).kind == "decoder" else ("plain",)
