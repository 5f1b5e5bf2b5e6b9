"""The benchmark models: names, presets, shapes, seeded weights (torchair_conformance.bench.presets, .models)."""
from __future__ import annotations

import pytest
import torch

from torchair_conformance import models as zoo
from torchair_conformance.bench import models, presets


def test_every_name_resolves_to_a_method() -> None:
    for name in presets.NAMES:
        assert presets.canonical(name) in presets.METHODS, name


def test_unknown_model_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown benchmark model 'gpt-huge'.*gpt-small"):
        presets.canonical("gpt-huge")


def test_llama_presets_span_a_few_mb_to_7b_class() -> None:
    sizes = {name: p.parameters() for name, p in presets.LLAMA.items()}
    assert sizes["llama-xs"] * 4 < 8 * 2**20, sizes
    assert 6.5e9 < sizes["llama-7b"] < 8e9, sizes
    assert all(p.heads % (p.kv_heads or p.heads) == 0 for p in presets.LLAMA.values())


def test_tiny_is_the_zoos_seed_with_prompt_and_decode() -> None:
    built = models.build("tiny")
    assert type(built.module) is zoo.SeedModel
    assert [type(m).__name__ for m in built.module.children()] == ["Linear", "Linear"]
    assert built.method == "prompt" and hasattr(built.module, "decode")
    x, kv = built.args
    assert isinstance(x, zoo.InputMeta) and x.is_prompt and isinstance(kv, list)
    with torch.no_grad():
        assert built.bound()(*built.args).shape == (2, 1)


@pytest.mark.parametrize("name, vocab, seq", [("gpt-small", 1000, 64), ("llama", 1000, 64)])
def test_decoders_map_tokens_to_logits(name: str, vocab: int, seq: int) -> None:
    built = models.build(name)
    (idx,) = built.args
    assert idx.shape == (1, seq) and idx.dtype == torch.int64
    with torch.no_grad():
        assert built.bound()(idx).shape == (1, seq, vocab)


def test_gpt_small_has_the_issue_sizes() -> None:
    module = models.build("gpt-small").module
    assert module.tokens.weight.shape == (1000, 256)
    assert len(module.blocks) == 4 and module.blocks[0].heads == 4
    assert module.blocks[0].fc.weight.shape == (1024, 256)


def test_weights_and_inputs_are_seeded() -> None:
    a, b = models.build("llama"), models.build("llama")
    assert torch.equal(a.module.blocks[0].wq.weight, b.module.blocks[0].wq.weight)
    assert torch.equal(a.args[0], b.args[0])
    assert torch.isfinite(a.module.cos).all() and a.module.cos[0].eq(1).all()


def test_building_and_running_a_preset_imports_no_dynamo() -> None:
    """A benchmark process that imported Dynamo looks traced (CC-14): building the models must not import it."""
    import subprocess
    import sys

    code = ("import sys, torch\nfrom torchair_conformance.bench import models\n"
            "for name in ('tiny', 'gpt-small', 'llama'):\n"
            "    built = models.build(name)\n    with torch.no_grad():\n        built.bound()(*built.args)\n"
            "print(sorted(m for m in ('torch._dynamo', 'torch._inductor') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr[-2000:]


def test_a_bfloat16_preset_is_allocated_in_bfloat16() -> None:
    p = presets.Preset(vocab=100, d_model=32, layers=1, heads=4, kv_heads=2, ffn=64, seq=8, dtype="bfloat16")
    module = models._llama(p, "cpu")
    assert {t.dtype for t in module.parameters()} == {torch.bfloat16} and module.cos.dtype == torch.float32
    assert torch.get_default_dtype() == torch.float32
    with torch.no_grad():
        assert module(torch.zeros(1, 8, dtype=torch.int64)).dtype == torch.bfloat16
