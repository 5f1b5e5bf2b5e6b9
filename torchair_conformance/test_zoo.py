"""SPEC CC-14, CC-18, CC-21 and CC-1 on real models: the zoo's `transformers` and `timm` models
(`torchair_conformance.zoo`), cached the way TorchAir's users cache them, cold then warm in fresh processes
(`torchair_conformance.workers.zoo`), against any implementation.

Skipped, with the install command, where the zoo's packages are not installed. The `nightly` tier of the zoo
(`zoo.catalog`: every model but GPT-2, Llama and ResNet-18) runs only under the `nightly` hypothesis profile. Outside
`nightly` the implementation's `fast_cache_config()` compiles (IMPL-2), as in the suite's other process properties.
"""
from __future__ import annotations

import pytest

from torchair_conformance import harness, profiles
from torchair_conformance.zoo import catalog, packages, patterns, run

_MISSING = packages.missing()

pytestmark = [pytest.mark.requires("cache"),
              pytest.mark.skipif(_MISSING is not None, reason=_MISSING or "")]


def _tiered(names: tuple[str, ...], ci: tuple[str, ...] | None = None) -> list:
    """`names` as parameters; those outside the CI tier skip unless the nightly profile is active."""
    nightly = profiles.active().name == "nightly"
    params = []
    for name in names:
        in_ci = name in ci if ci is not None else catalog.entry(name).tier == "ci"
        marks = [] if in_ci or nightly else [pytest.mark.skip(reason="zoo model of the nightly tier: runs under "
                                                                     "--hypothesis-profile nightly")]
        params.append(pytest.param(name, id=name, marks=marks))
    return params


def _run(impl, name: str, pattern: str, variant: str | None = None) -> run.ZooRun:
    return run.run(name, pattern, impl=impl.name, config=harness.fast_options(impl),
                   env=harness.worker_env(impl.name), variant=variant)


def _assert_warm_start(result: run.ZooRun) -> None:
    problems = result.problems()
    assert not problems, f"{result.model} [{result.pattern}] on {result.impl}:\n- " + "\n- ".join(problems)


@pytest.mark.clause("CC-14", "CC-18")
@pytest.mark.parametrize("name", _tiered(catalog.NAMES))
def test_zoo_model_warm_start_traces_nothing_and_matches_eager(impl, name):
    """A real model's method (returning the library's own output dataclass) is cached: the warm process traces 0
    graphs, repeats the cold outputs bit for bit and matches eager, also at another batch or sequence length."""
    _assert_warm_start(_run(impl, name, "plain"))


@pytest.mark.clause("CC-14", "CC-21")
@pytest.mark.parametrize("name", _tiered(catalog.DECODERS, ci=("gpt2", "llama")))
def test_zoo_served_prompt_and_decode_warm_start(impl, name):
    """An LLM served with a static KV cache (`prompt` and `decode`, `dynamic=True`): the warm process serves another
    prompt length and other cache lengths than the cold one traced, with no trace and eager's logits and KV cache."""
    _assert_warm_start(_run(impl, name, "served"))


@pytest.mark.clause("CC-21")
@pytest.mark.parametrize("name", _tiered(tuple(n for n in catalog.LANGUAGE if catalog.entry(n).attention_mask)))
def test_zoo_call_without_the_traced_attention_mask_is_not_served_the_cold_graph(impl, name):
    """CC-21 (b): a warm call without the `attention_mask` the cold call passed (None versus a tensor) gets eager's
    result (a retrace, a stale file, or an eager run), never the cold graph's."""
    result = _run(impl, name, "plain", variant="no_mask")
    warm = result.warm or {}
    assert warm.get("error") is None, f"{name}: the warm process raised {warm.get('error')}"
    wrong = [s for s in warm.get("steps", []) if s.get("close") is False]
    assert not wrong, f"{name}: warm results differ from eager's: {wrong}"
    assert len(warm.get("steps", [])) == 2, f"{name}: the warm process did not make both calls: {warm.get('steps')}"


@pytest.mark.clause("CC-1", "CC-14")
def test_vllm_ascend_proxy_forwards_are_cached_per_batch_size(impl):
    """CC-1: vLLM-Ascend's TorchAir runner passes `fullgraph=True` (an extra keyword) with a proxy forward per graph
    batch size; each proxy is cached in its own folder and warm-starts."""
    result = _run(impl, "llama", "vllm")
    _assert_warm_start(result)
    names = sorted(path.split("/")[-2] for path in result.files)
    assert names == sorted(f"VllmStyleDecoder_forward_with_batch_size_{n}" for n in patterns.VLLM_BATCH_SIZES), (
        f"CC-8: one <func> folder per proxy, named after it: {result.files}")
