"""SPEC CC-15 (input checks on the first warm call), CC-16 (inference only) and CC-18 (input/output forms and
rebinding on warm start)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torchair_conformance import harness, models, profiles
from torchair_conformance import strategies as cst
from torchair_conformance.assertions import assert_worker_ok

# IMPL-2: every test here needs a cache file written on this device.
pytestmark = [pytest.mark.requires("cache")]


def _config(impl):
    return [list(option) for option in harness.fast_options(impl)]


def _first_mismatch(shape, stride, cached_shape, cached_stride):
    for i, (s, t, cs, ct) in enumerate(zip(shape, stride, cached_shape, cached_stride)):
        if s != cs or t != ct:
            return f"expected size {s}=={cs}, stride {t}=={ct} at dim={i}"
    return None


@pytest.mark.clause("CC-15")
@pytest.mark.parametrize("change", ["size", "stride"])
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("process", 2))
def test_first_warm_call_checks_sizes_and_strides(impl, change, data):
    width = data.draw(st.integers(2, profiles.active().max_width), label="width")
    module = {"kind": "stack", "seed": data.draw(cst.seeds, label="param_seed"), "dtype": "float32",
              "structure": {"class_name": "SizeNet", "in_features": width,
                            "layers": [{"kind": "linear", "out": width, "bias": True}]}}
    cold_shape = data.draw(st.lists(st.integers(2, 6), min_size=1, max_size=2), label="cold_batch") + [width]
    if change == "size":
        dim = data.draw(st.integers(0, len(cold_shape) - 2), label="dim")
        warm_shape = list(cold_shape)
        warm_shape[dim] = data.draw(st.integers(2, 8).filter(lambda v: v != cold_shape[dim]), label="warm_size")
        warm = {"shape": warm_shape, "dtype": "float32", "seed": 1, "layout": "contiguous"}
    else:
        warm = {"shape": cold_shape, "dtype": "float32", "seed": 1, "layout": "transposed"}
    cold = {"shape": cold_shape, "dtype": "float32", "seed": 0, "layout": "contiguous"}
    expected_tensor = models.make_input(cold)
    got_tensor = models.make_input(warm)
    message = _first_mismatch(got_tensor.shape, got_tensor.stride(), expected_tensor.shape, expected_tensor.stride())
    job = {"module": module, "config": _config(impl), "cache_compile": {"dynamic": False}}
    with harness.scratch() as base:
        job["cache_compile"]["cache_dir"] = str(base / "cache")
        assert_worker_ok(harness.run_worker("cold", {**job, "calls": [{"inputs": [cold]}]}, impl=impl.name, cwd=base),
                         what="cold run")
        result = harness.run_worker("warm", {**job, "calls": [{"inputs": [warm]}]}, impl=impl.name, cwd=base)
    err = result["error"]
    assert err is not None, f"CC-15: a {change} mismatch ({warm}) was accepted by the warm run: {result}"
    assert err["type"] == "builtins.AssertionError", (
        f"CC-15: expected AssertionError, got {err['type']}: {err['message']}")
    assert message in err["message"], f"CC-15: expected {message!r} in {err['message']!r}"


@pytest.mark.clause("CC-15")
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("process", 2))
def test_first_warm_call_of_a_dynamic_graph_names_concrete_sizes_and_strides(impl, data):
    """The message of a dynamic graph names numbers, the graph's symbols bound to the call's sizes (the first
    mismatching dim; upstream's `assert_size_stride` lists every one)."""
    width = data.draw(st.integers(2, profiles.active().max_width), label="width")
    module = {"kind": "stack", "seed": data.draw(cst.seeds, label="param_seed"), "dtype": "float32",
              "structure": {"class_name": "DynSizeNet", "in_features": width,
                            "layers": [{"kind": "linear", "out": width, "bias": True}]}}
    shape = data.draw(st.lists(st.integers(2, 6), min_size=2, max_size=2), label="batch") + [width]
    cold = {"shape": shape, "dtype": "float32", "seed": 0, "layout": "contiguous"}
    warm = {"shape": shape, "dtype": "float32", "seed": 1, "layout": "strided"}
    got = models.make_input(warm)
    contiguous = models.make_input(cold)
    message = _first_mismatch(got.shape, got.stride(), contiguous.shape, contiguous.stride())
    job = {"module": module, "config": _config(impl), "cache_compile": {"dynamic": True}}
    with harness.scratch() as base:
        job["cache_compile"]["cache_dir"] = str(base / "cache")
        assert_worker_ok(harness.run_worker("cold", {**job, "calls": [{"inputs": [cold]}]}, impl=impl.name, cwd=base),
                         what="cold run")
        result = harness.run_worker("warm", {**job, "calls": [{"inputs": [warm]}]}, impl=impl.name, cwd=base)
    err = result["error"]
    assert err is not None, f"CC-15: a strided input ({warm}) was accepted by the warm run of a dynamic graph: {result}"
    assert err["type"] == "builtins.AssertionError", (
        f"CC-15: expected AssertionError, got {err['type']}: {err['message']}")
    assert message in err["message"], f"CC-15: expected {message!r} in {err['message']!r}"


@pytest.mark.clause("CC-16")
@given(data=st.data())
@settings(max_examples=profiles.examples("compile"))
def test_outputs_carry_no_autograd_graph(impl, data):
    module = data.draw(cst.module_specs(max_depth=3), label="module")
    inputs = data.draw(cst.input_specs(module), label="inputs")
    input_requires_grad = data.draw(st.booleans(), label="input_requires_grad")
    harness.fresh_dynamo()
    m = models.build_module(module["structure"], module["seed"])
    x = [t.requires_grad_(input_requires_grad) if t.is_leaf else t for t in models.make_inputs(inputs)]
    grad_mode = torch.is_grad_enabled()
    with harness.scratch() as base:
        out = impl.cache_compile(m.forward, config=harness.make_config(impl, [tuple(o) for o in _config(impl)]),
                                 cache_dir=str(base))(*x)
    assert not out.requires_grad and out.grad_fn is None, (
        f"CC-16: output requires_grad={out.requires_grad}, grad_fn={out.grad_fn}")
    with pytest.raises(RuntimeError):
        out.sum().backward()
    assert torch.is_grad_enabled() == grad_mode, f"CC-16: the call left grad mode {torch.is_grad_enabled()}"


@pytest.mark.clause("CC-18", "CC-14", "CC-16")
@pytest.mark.parametrize("dynamic", [False, True])  # a case each: upstream diverges for one of them (IMPL-5)
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("process", 2))
def test_keyword_dataclass_list_and_int_inputs_and_tuple_outputs(impl, dynamic, data):
    width = data.draw(st.integers(1, profiles.active().max_width), label="width")
    batch = data.draw(st.integers(2, 6), label="batch")
    step = data.draw(st.integers(2, 5), label="step")
    seed = data.draw(cst.seeds, label="seed")
    module = {"kind": "special", "name": "kwargs", "width": width, "seed": seed}
    job = {"module": module, "config": _config(impl), "cache_compile": {"dynamic": dynamic},
           "calls": [{"special": {"batch": batch, "seed": seed, "step": step}}], "compare_eager": True}
    with harness.scratch() as base:
        job["cache_compile"]["cache_dir"] = str(base / "cache")
        cold = harness.run_worker("cold", job, impl=impl.name, cwd=base)
        warm = harness.run_worker("warm", job, impl=impl.name, cwd=base)
    for name, result in (("cold", cold), ("warm", warm)):
        assert_worker_ok(result, what=f"{name} run")
        assert result["eager_max_diff"][0] <= 1e-4, f"CC-18: {name} run differs from eager: {result['eager_max_diff']}"
        assert result["requires_grad"] == [False], f"CC-16: {name} outputs carry autograd state"
    assert warm["unique_graphs"] == 0, f"CC-14: the warm run traced {warm['unique_graphs']} graph(s)"
    assert warm["digests"] == cold["digests"], "CC-14: warm outputs differ from the cold run's"


@pytest.mark.clause("CC-18", "CC-14")
@given(data=st.data())
@settings(max_examples=profiles.examples("process"))
def test_unregistered_closure_and_global_tensors_are_rebound_on_warm_start(impl, data):
    width = data.draw(st.integers(1, profiles.active().max_width), label="width")
    batch = data.draw(st.integers(2, 6), label="batch")
    dynamic = data.draw(st.booleans(), label="dynamic")
    cold_seed, warm_seed = data.draw(st.lists(cst.seeds, min_size=2, max_size=2, unique=True), label="seeds")
    offset = data.draw(st.floats(-4, 4, allow_nan=False).filter(lambda v: v != 0.0), label="warm_global_offset")
    base_job = {"config": _config(impl), "cache_compile": {"dynamic": dynamic}, "compare_eager": True,
                "calls": [{"special": {"batch": batch, "seed": 7}}]}
    with harness.scratch() as base:
        base_job["cache_compile"]["cache_dir"] = str(base / "cache")
        cold = harness.run_worker("cold", {**base_job, "module": {"kind": "special", "name": "unregistered",
                                                                  "width": width, "seed": cold_seed}},
                                  impl=impl.name, cwd=base)
        assert_worker_ok(cold, what="cold run")
        warm = harness.run_worker("warm", {**base_job, "globals": {"GLOBAL_OFFSET": offset},
                                           "module": {"kind": "special", "name": "unregistered", "width": width,
                                                      "seed": warm_seed}}, impl=impl.name, cwd=base)
    assert_worker_ok(warm, what="warm run")
    assert warm["unique_graphs"] == 0, f"CC-14: the warm run traced {warm['unique_graphs']} graph(s)"
    assert warm["eager_max_diff"][0] <= 1e-4, (
        "CC-18: the warm run used the cold run's tensors instead of its own attribute, closure and global tensors: "
        f"max |warm - eager| = {warm['eager_max_diff'][0]}")


def _same_aliasing(got: dict, eager: dict) -> bool:
    """CC-18, one call's outputs: the same container types, every tensor sharing the same argument's storage as
    eager's, and a view wherever eager's is one. Where eager returns the argument itself (`x.contiguous()` of a
    contiguous `x`) a view of it is as good: the contract is aliasing (no copy), not object identity."""
    if got["types"] != eager["types"] or got["shares_input"] != eager["shares_input"]:
        return False
    return all(g == e or (not e and shared is not None)
               for g, e, shared in zip(got["is_view"], eager["is_view"], eager["shares_input"]))


@pytest.mark.clause("CC-18", "CC-14")
@pytest.mark.parametrize("name", ["views", "structs"])
@given(data=st.data())
@settings(max_examples=profiles.examples("process"))
def test_view_and_dataclass_outputs_are_cached_and_rebuilt(impl, name, data):
    """Outputs that are views of the inputs (`view`, `t`, a slice, `view_as_real`, the input itself) and outputs built
    as a dataclass (HuggingFace `ModelOutput` style) or a namedtuple: the cold run writes the file, a fresh process
    loads it untraced, and both give eager's values, container types and aliasing (a view of the caller's tensor
    where eager returns one, never a copy)."""
    width = data.draw(st.integers(2, profiles.active().max_width), label="width")
    batch = data.draw(st.integers(2, 6).filter(lambda b: b != width), label="batch")
    dynamic = data.draw(st.booleans(), label="dynamic")
    seed = data.draw(cst.seeds, label="seed")
    job = {"module": {"kind": "special", "name": name, "width": width, "seed": seed}, "config": _config(impl),
           "cache_compile": {"dynamic": dynamic}, "calls": [{"special": {"batch": batch, "seed": seed}}],
           "compare_eager": True}
    with harness.scratch() as base:
        job["cache_compile"]["cache_dir"] = str(base / "cache")
        cold = harness.run_worker("cold", job, impl=impl.name, cwd=base)
        assert_worker_ok(cold, what="cold run")
        files = sorted((base / "cache").rglob("compiled_module"))
        warm = harness.run_worker("warm", job, impl=impl.name, cwd=base)
    assert files, f"CC-18: no cache file was written for the {name} outputs; warnings: {cold['warnings']}"
    assert_worker_ok(warm, what="warm run")
    assert warm["unique_graphs"] == 0, f"CC-14: the warm run traced {warm['unique_graphs']} graph(s)"
    for run, result in (("cold", cold), ("warm", warm)):
        assert result["eager_max_diff"][0] <= 1e-4, f"CC-18: {run} run differs from eager: {result['eager_max_diff']}"
        assert len(result["outputs"]) == len(result["eager_outputs"]) and all(
                _same_aliasing(got, eager) for got, eager in zip(result["outputs"], result["eager_outputs"])), (
            f"CC-18: {run} outputs' types or aliasing differ from eager's: {result['outputs']} vs "
            f"{result['eager_outputs']}")
    assert warm["digests"] == cold["digests"], "CC-14: warm outputs differ from the cold run's"
