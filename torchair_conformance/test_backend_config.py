"""SPEC CC-4 (config/backend rule, with CF-2's value equality) and CC-19 (custom decompositions)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torchair_conformance import harness, models, profiles
from torchair_conformance import strategies as cst
from torchair_conformance.assertions import assert_cache_file_at, assert_outputs_close

MISMATCH = "config in current backend is different from the config during cache generation."
_NET = {"class_name": "Net", "in_features": 3, "layers": [{"kind": "linear", "out": 4, "bias": True},
                                                          {"kind": "act", "fn": "gelu"}]}


def _modes(impl):
    return cst.MODES if impl.has("reduce-overhead") else ("max-autotune",)


DIFFERING_OPTIONS = ("mode",) + cst.BOOL_OPTIONS


@pytest.mark.clause("CC-4")
@pytest.mark.parametrize("path", DIFFERING_OPTIONS)
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("cheap", len(DIFFERING_OPTIONS)))
def test_backend_with_a_different_config_is_rejected(impl, path, data):
    options = data.draw(cst.config_options(modes=cst.MODES), label="config")
    config = harness.make_config(impl, options)
    current = dict(options).get(path, "max-autotune" if path == "mode" else False)
    other = next(v for v in (cst.MODES if path == "mode" else (False, True)) if v != current)
    backend = impl.get_npu_backend(compiler_config=harness.make_config(impl, list(options) + [(path, other)]))
    m = models.build_module(_NET, 0)
    with pytest.raises(ValueError) as info:
        impl.cache_compile(m.forward, config=config, backend=backend)
    assert str(info.value) == MISMATCH, f"expected exactly {MISMATCH!r}, got {str(info.value)!r}"


@pytest.mark.clause("CC-4", "CC-2")
def test_the_config_check_comes_before_the_method_check(impl):
    """CC-4 before CC-2: a backend whose config differs from ``config`` is reported even for a function that is not
    a method."""
    backend = impl.get_npu_backend(compiler_config=harness.make_config(impl, [("mode", "reduce-overhead")]))
    with pytest.raises(ValueError) as info:
        impl.cache_compile(lambda x: x, config=harness.make_config(impl, [("mode", "max-autotune")]), backend=backend)
    assert str(info.value) == MISMATCH, f"expected the CC-4 error {MISMATCH!r} first, got {str(info.value)!r}"


@pytest.mark.clause("CC-4", "CF-2")
@given(options=cst.config_options(modes=cst.MODES), data=st.data())
@settings(max_examples=profiles.examples("cheap"))
def test_backend_with_an_equal_but_separately_built_config_is_accepted(impl, options, data):
    reordered = data.draw(st.permutations(options), label="reordered")
    backend = impl.get_npu_backend(compiler_config=harness.make_config(impl, reordered))
    m = models.build_module(_NET, 0)
    impl.cache_compile(m.forward, config=harness.make_config(impl, options), backend=backend)


@pytest.mark.requires("cache")
@pytest.mark.clause("CC-4")
@pytest.mark.parametrize("given_as", ["backend only", "config and same backend"])
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("compile", 2))
def test_backend_only_uses_its_config_for_the_path(impl, given_as, data):
    module = data.draw(cst.module_specs(max_depth=3), label="module")
    options = data.draw(cst.config_options(modes=_modes(impl), fast=harness.fast_options(impl), global_options=False),
                        label="config")
    inputs = data.draw(cst.input_specs(module, layouts=("contiguous",)), label="inputs")
    harness.fresh_dynamo()
    m = models.build_module(module["structure"], module["seed"])
    config = harness.make_config(impl, options)
    backend = impl.get_npu_backend(compiler_config=config)
    kwargs = {"backend": backend} if given_as == "backend only" else {"backend": backend, "config": config}
    with harness.scratch() as base:
        compiled = impl.cache_compile(m.forward, cache_dir=str(base), **kwargs)
        x = models.make_inputs(inputs)
        out = compiled(*x)
        expected = harness.expected_cache_file(impl, m, "forward", options, dynamic=True, root=str(base))
        assert_cache_file_at(base, expected, story=f"{given_as}: the path of config={options!r}")
    with torch.no_grad():
        assert_outputs_close(out, m(*x), what="compiled vs eager")


@pytest.mark.requires("cache")
@pytest.mark.clause("CC-4", "CC-7")
@pytest.mark.uses_default_config
@given(data=st.data())
@settings(max_examples=profiles.examples("inductor"))
def test_neither_config_nor_backend_means_the_default_config(impl, data):
    """The one property that compiles with the implementation's true default config in every profile."""
    module = data.draw(cst.module_specs(max_depth=2), label="module")
    inputs = data.draw(cst.input_specs(module, layouts=("contiguous",)), label="inputs")
    harness.fresh_dynamo()
    m = models.build_module(module["structure"], module["seed"])
    with harness.scratch() as base:
        compiled = impl.cache_compile(m.forward, cache_dir=str(base))
        x = models.make_inputs(inputs)
        out = compiled(*x)
        expected = harness.expected_cache_file(impl, m, "forward", [], dynamic=True, root=str(base))
        assert_cache_file_at(base, expected, story="no config, no backend: a default config")
    with torch.no_grad():
        assert_outputs_close(out, m(*x), what="default-config compile vs eager")


def _doubled_gelu(x, approximate="none"):
    return x * 2.0


@pytest.mark.requires("cache")
@pytest.mark.clause("CC-19")
@given(data=st.data())
@settings(max_examples=profiles.examples("compile"))
def test_custom_decompositions_are_applied(impl, data):
    width = data.draw(st.integers(1, profiles.active().max_width), label="width")
    batch = data.draw(st.integers(2, 6), label="batch")
    options = data.draw(cst.config_options(fast=harness.fast_options(impl), global_options=False), label="config")
    harness.fresh_dynamo()
    spec = {"class_name": "DecompNet", "in_features": width,
            "layers": [{"kind": "linear", "out": width, "bias": True}, {"kind": "act", "fn": "gelu"}]}
    m = models.build_module(spec, data.draw(cst.seeds, label="param_seed"))
    decompositions = {torch.ops.aten.gelu.default: _doubled_gelu}
    x = torch.randn(batch, width, device=models.device())
    with harness.scratch() as base:
        compiled = impl.cache_compile(m.forward, config=harness.make_config(impl, options), cache_dir=str(base),
                                      custom_decompositions=decompositions)
        out = compiled(x)
    with torch.no_grad():
        expected = m.layers[0](x) * 2.0
    assert_outputs_close(out, expected, what="gelu replaced by the custom decomposition x * 2")
