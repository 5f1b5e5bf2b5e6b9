"""SPEC CC-14 (warm start in a fresh process: no tracing, equal outputs), with CC-7, CC-10 and CC-20 across
processes. Cold and warm runs are real subprocesses (``torchair_conformance.workers``)."""

from __future__ import annotations

import logging

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torchair_conformance import harness, models, profiles
from torchair_conformance import strategies as cst
from torchair_conformance.assertions import assert_cache_file_at, assert_worker_ok, max_abs_diff_bound, messages_at

# IMPL-2: every test here needs a cache file written on this device.
pytestmark = [pytest.mark.requires("cache")]


def _job(module, method, options, dynamic, cache_dir, inputs, **extra):
    return {"module": module, "method": method, "config": [list(o) for o in options],
            "cache_compile": {"dynamic": dynamic, "cache_dir": cache_dir, **extra.pop("cache_compile", {})},
            "calls": [{"inputs": inputs}], **extra}


def _expected(impl, module, method, options, dynamic, root, ranks=None):
    m = models.build_module(module["structure"], module["seed"], module["dtype"])
    return harness.expected_cache_file(impl, m, method, options, dynamic=dynamic, root=root, ranks=ranks)


def _check_warm(impl, cold, warm, expected):
    assert_worker_ok(cold, what="cold run")
    assert_worker_ok(warm, what="warm run")
    assert cold["unique_graphs"] >= 1, f"the cold run traced nothing: {cold}"
    assert warm["unique_graphs"] == 0, (
        f"CC-14: the warm run traced {warm['unique_graphs']} graph(s) with Dynamo; logs: {warm['logs']}")
    if warm["frames_total"] is not None:
        assert warm["frames_total"] == 0, f"CC-14: the warm run evaluated {warm['frames_total']} Dynamo frame(s)"
    assert warm["digests"] == cold["digests"], (
        f"CC-14: warm outputs differ bitwise from the cold run's on the same inputs: {warm['digests']} vs "
        f"{cold['digests']}")
    saved = [m for m in messages_at(cold, logging.INFO) if "saved to" in m and expected in m]
    loaded = [m for m in messages_at(warm, logging.INFO) if "loaded from" in m and expected in m]
    assert saved, f"CC-20: no INFO '... saved to {expected}' in the cold run: {cold['logs']}"
    assert loaded, f"CC-20: no INFO '... loaded from {expected}' in the warm run: {warm['logs']}"


@pytest.mark.clause("CC-14", "CC-20", "CC-10")
@given(data=st.data())
@settings(max_examples=profiles.examples("process"))
def test_warm_start_in_a_fresh_process_traces_nothing_and_matches(impl, data):
    module = data.draw(cst.module_specs(dtypes=cst.graph_dtypes(impl, ("float32", "float64", "bfloat16"))),
                       label="module")
    method = data.draw(st.sampled_from(models.METHODS), label="method")
    options = data.draw(cst.config_options(fast=harness.fast_options(impl)), label="config")
    dynamic = data.draw(st.booleans(), label="dynamic")
    ranks = data.draw(cst.ranks(with_global=False), label="ranks")
    inputs = data.draw(cst.input_specs(module), label="inputs")
    # CC-10: parameter values never change the path, so a warm process with other weights finds the same file.
    warm_seed = data.draw(st.one_of(st.just(module["seed"]), cst.seeds), label="warm_param_seed")
    with harness.scratch() as base:
        root = str(base / "cache")
        cold = harness.run_worker("cold", _job(module, method, options, dynamic, root, inputs,
                                               cache_compile=dict(ranks)), impl=impl.name, cwd=base)
        expected = _expected(impl, module, method, options, dynamic, root, ranks)
        assert_cache_file_at(root, expected)
        warm_module = {**module, "seed": warm_seed}
        warm = harness.run_worker("warm", _job(warm_module, method, options, dynamic, root, inputs,
                                               cache_compile=dict(ranks), compare_eager=True),
                                  impl=impl.name, cwd=base)
        if warm_seed == module["seed"]:
            _check_warm(impl, cold, warm, expected)
        else:
            assert_worker_ok(warm, what="warm run with other parameter values")
            assert warm["unique_graphs"] == 0, f"CC-10/14: other parameter values made the warm run trace: {warm}"
            bound = max_abs_diff_bound(_eager(warm_module, method, inputs))
            assert warm["eager_max_diff"][0] <= bound, (
                f"CC-18: the warm run did not use its own parameters: max |warm - eager| = "
                f"{warm['eager_max_diff']} > {bound}")


def _eager(module, method, inputs):
    """The outputs of ``module``'s ``method`` run eagerly on ``inputs``, in this process."""
    m = models.build_module(module["structure"], module["seed"], module["dtype"])
    with torch.no_grad():
        return getattr(m, method)(*models.make_inputs(inputs))


ROOT_KINDS = ("env", "default", "relative", "cwd changed before the first call")


@pytest.mark.clause("CC-7", "CC-8", "CC-14")
@pytest.mark.parametrize("kind", ROOT_KINDS)
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("process", len(ROOT_KINDS)))
def test_root_from_env_or_cwd_is_read_at_the_first_call_in_each_process(impl, kind, data):
    module = data.draw(cst.module_specs(max_depth=2), label="module")
    inputs = data.draw(cst.input_specs(module, layouts=("contiguous",)), label="inputs")
    options = impl.fast_cache_options()
    with harness.scratch() as base:
        (base / "start").mkdir()
        (base / "later").mkdir()
        env, cache_dir, chdir, root = None, None, None, None
        if kind == "env":
            env, root = {"TORCHAIR_CACHE_HOME": str(base / "home")}, str(base / "home")
        elif kind == "default":
            root = str(base / "start" / ".torchair_cache")
        elif kind == "relative":
            cache_dir, root = "rel/cache", str(base / "start" / "rel" / "cache")
        else:
            chdir, root = str(base / "later"), str(base / "later" / ".torchair_cache")
        job = _job(module, "forward", options, True, cache_dir, inputs, chdir=chdir)
        cold = harness.run_worker("cold", job, impl=impl.name, cwd=base / "start", env=env)
        expected = _expected(impl, module, "forward", options, True, root)
        assert_cache_file_at(base, expected, story=kind)
        warm = harness.run_worker("warm", job, impl=impl.name, cwd=base / "start", env=env)
        _check_warm(impl, cold, warm, expected)


@pytest.mark.clause("CC-14", "CC-7")
@pytest.mark.uses_default_config
@given(data=st.data())
@settings(max_examples=profiles.examples("inductor"))
def test_warm_start_with_the_default_config(impl, data):
    """The implementation's true default config (its real graph compiler), cold then warm."""
    module = data.draw(cst.module_specs(max_depth=2), label="module")
    inputs = data.draw(cst.input_specs(module), label="inputs")
    dynamic = data.draw(st.booleans(), label="dynamic")
    with harness.scratch() as base:
        root = str(base / "cache")
        job = _job(module, "forward", [], dynamic, root, inputs)
        cold = harness.run_worker("cold", job, impl=impl.name, cwd=base)
        expected = _expected(impl, module, "forward", [], dynamic, root)
        assert_cache_file_at(root, expected)
        warm = harness.run_worker("warm", job, impl=impl.name, cwd=base)
        _check_warm(impl, cold, warm, expected)
