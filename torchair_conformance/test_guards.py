"""SPEC CC-21 (SHOULD: a warm call the cold trace's guards would reject is never served silently) and CC-22 (no
per-process randomness in the cache's decisions), with CC-12, CC-14, CC-17 for how a re-trace shows.

Each example is a cold process (``torchair_conformance.workers.guards`` writes the cache) then a warm process whose
call differs from the cold one in what Dynamo guarded (``torchair_conformance.guard_models``): drawn sizes against
drawn slice bounds and branches, drawn argument structures and values, hooks, training, global state and code. The
warm call meets the file first (``when="first"``: a stale file, CC-17) or after the cold call loaded it
(``"later"``: a recompile, CC-12). Every call is judged in the warm process against eager's result on the same
inputs: equal, or an error where eager raises too. Upstream skips every guard by design (CC-21 *Upstream*): its
outcomes are known divergences.
"""

from __future__ import annotations

import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torchair_conformance import guard_models, harness, profiles
from torchair_conformance import strategies as cst
from torchair_conformance.assertions import assert_worker_ok, messages_at

# IMPL-2: a warm start needs a cache file written on this device.
pytestmark = [pytest.mark.requires("cache")]

WHEN = ("first", "later")


def _when(kinds: tuple[str, ...], kind: str) -> st.SearchStrategy[str]:
    """Both phases across the kinds of a property: hypothesis's first example draws the first value of a
    ``sampled_from``, and the ``dev`` and ``ci`` budgets give each kind one example, so every other kind lists
    ``"later"`` first. ``nightly`` draws both for every kind."""
    return st.sampled_from(WHEN if kinds.index(kind) % 2 == 0 else WHEN[::-1])


def _run(impl, case, phase, dynamic, options, base, env=None):
    job = {"case": case, "phase": phase, "config": [list(o) for o in options],
           "cache_compile": {"dynamic": dynamic, "cache_dir": str(base / "cache")}}
    return harness.run_worker("guards", job, impl=impl.name, cwd=base, env=env)


def _cold(impl, case, dynamic, options, base, env=None):
    cold = _run(impl, case, "cold", dynamic, options, base, env)
    assert_worker_ok(cold, what="cold run")
    assert all(c["outcome"] == "equal" for c in cold["calls"]), f"the cold run differs from eager: {cold['calls']}"
    assert harness.cache_files(base / "cache"), f"CC-7: the cold run wrote no cache file; logs: {cold['logs']}"
    return cold


def _cold_then_warm(impl, case, when, dynamic, options, warm_env=None):
    """CC-21: a cold process, then a warm one whose call the cold trace's guards reject; the warm result."""
    with harness.scratch() as base:
        _cold(impl, case, dynamic, options, base)
        warm = _run(impl, case, "warm" if when == "first" else "later", dynamic, options, base, warm_env)
    _assert_never_served_silently(warm, when)
    return warm


def _assert_never_served_silently(warm, when):
    assert_worker_ok(warm, what="warm run")
    bad = [c for c in warm["calls"] if not (c["outcome"] == "equal" or (
        c["outcome"] == "raised" and c["eager_error"] is not None))]
    assert not bad, (f"CC-21: the warm run served a call the cold trace's guards reject: {bad}; "
                     f"warnings: {warm['warnings']}; logs: {warm['logs']}")
    if when == "later":
        assert warm["calls"][0]["outcome"] == "equal", f"CC-14: the cold call, loaded warm: {warm['calls'][0]}"
    if warm["unique_graphs"] and when == "later":
        said = [w for w in warm["warnings"] if "Skip cache as" in w and "recompiled" in w]
        assert said, f"CC-12: the warm run re-traced without 'Skip cache as ... recompiled': {warm['warnings']}"
    elif warm["unique_graphs"]:
        said = messages_at(warm, logging.WARNING) + warm["warnings"]
        assert said, f"CC-17: the warm run discarded its file and re-traced without a warning; logs: {warm['logs']}"


@pytest.mark.clause("CC-21", "CC-12", "CC-17")
@pytest.mark.uses_default_config
@pytest.mark.parametrize("kind", guard_models.SIZE_KINDS)
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("inductor", len(guard_models.SIZE_KINDS)))
def test_sizes_across_a_guarded_relation(impl, kind, data):
    """CC-21 (a): cached with more rows than a slice bound, a branch, 1 or 0, called with rows on the other side;
    with the real graph compiler (an ATen graph run op by op would clamp a slice where a kernel reads past it)."""
    bound = data.draw(st.integers(2, 6), label="bound")
    rows = data.draw(st.integers(bound + 1, bound + 8), label="cold_rows")
    warm_rows = {"squeeze": 1, "empty": 0}.get(kind) or data.draw(st.integers(1, bound - 1), label="warm_rows")
    case = {"kind": kind, "seed": data.draw(cst.seeds, label="seed"), "bound": bound, "rows": rows,
            "warm_rows": warm_rows, "width": data.draw(st.integers(2, 5), label="width")}
    _cold_then_warm(impl, case, data.draw(_when(guard_models.SIZE_KINDS, kind), label="when"), True, [])


@pytest.mark.clause("CC-21", "CC-12", "CC-17")
@pytest.mark.parametrize("kind", guard_models.STRUCTURE_KINDS)
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("process", len(guard_models.STRUCTURE_KINDS)))
def test_argument_structure_the_cold_trace_did_not_see(impl, kind, data):
    """CC-21 (b): the same tensor twice then two tensors, None then a tensor, another list length, tied then untied
    parameters (of the same `str(module)`)."""
    length = data.draw(st.integers(1, 3), label="length")
    case = {"kind": kind, "seed": data.draw(cst.seeds, label="seed"), "rows": data.draw(st.integers(2, 6),
            label="rows"), "width": data.draw(st.integers(1, 5), label="width"), "length": length,
            "warm_length": data.draw(st.integers(0, 4).filter(lambda n: n != length), label="warm_length")}
    when = "first" if kind == "tied" else data.draw(_when(guard_models.STRUCTURE_KINDS, kind), label="when")
    _cold_then_warm(impl, case, when, data.draw(st.booleans(), label="dynamic"), harness.fast_options(impl))


WARM_VALUES = {"int": st.integers(-4, 9).filter(lambda k: k != 2), "bool": st.just(False),
               "str": st.sampled_from(["sigmoid", "gelu", ""])}


@pytest.mark.clause("CC-21", "CC-12", "CC-17")
@pytest.mark.parametrize("kind", guard_models.VALUE_KINDS)
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("process", len(guard_models.VALUE_KINDS)))
def test_values_the_graph_specialised_on(impl, kind, data):
    """CC-21 (c): cached with k=2, flag=True, mode="relu"; called with another int (dynamic=False), bool or str."""
    case = {"kind": kind, "seed": data.draw(cst.seeds, label="seed"), "rows": data.draw(st.integers(1, 6),
            label="rows"), "width": data.draw(st.integers(1, 5), label="width"),
            "warm_value": data.draw(WARM_VALUES[kind], label="warm_value")}
    dynamic = False if kind == "int" else data.draw(st.booleans(), label="dynamic")
    _cold_then_warm(impl, case, data.draw(_when(guard_models.VALUE_KINDS, kind), label="when"), dynamic,
                    harness.fast_options(impl))


@pytest.mark.clause("CC-21", "CC-17")
@pytest.mark.parametrize("kind", guard_models.MODULE_KINDS)
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("process", len(guard_models.MODULE_KINDS)))
def test_module_state_and_code_the_cold_trace_did_not_see(impl, kind, data):
    """CC-21 (d)-(f): a submodule's forward hook removed or added, a submodule back in training, the default dtype or
    autocast at the warm call, a monkeypatched submodule method, a helper chosen at import time; the first warm call
    meets them. Autocast and the default dtype use the real graph compiler (an ATen graph run op by op autocasts, and
    creates tensors in the default dtype, anyway)."""
    case = {"kind": kind, "seed": data.draw(cst.seeds, label="seed"), "rows": data.draw(st.integers(2, 6),
            label="rows"), "width": data.draw(st.integers(1, 5), label="width")}
    options = [] if kind in ("autocast", "default_dtype") else harness.fast_options(impl)
    env = {"CONFORMANCE_GUARD_HELPER": "sigmoid"} if kind == "import_helper" else None
    _cold_then_warm(impl, case, "first", data.draw(st.booleans(), label="dynamic"), options, warm_env=env)


@pytest.mark.clause("CC-21", "CC-12", "CC-14")
@pytest.mark.parametrize("kind", guard_models.BETWEEN_CALLS_KINDS)
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("process", len(guard_models.BETWEEN_CALLS_KINDS)))
def test_module_state_changed_between_warm_calls(impl, kind, data):
    """CC-21: the checks run on every call, not only the first. A warm process makes the cold call (served from the
    file), then a forward hook is added, a submodule goes back to training, a method is monkeypatched, a bool
    attribute or a module-level config flag is switched, or a submodule is replaced, and the next call meets it: it
    gets eager's result (a recompile, CC-12), never the first call's graph."""
    case = {"kind": kind, "seed": data.draw(cst.seeds, label="seed"), "rows": data.draw(st.integers(2, 6),
            label="rows"), "width": data.draw(st.integers(1, 5), label="width")}
    _cold_then_warm(impl, case, "later", data.draw(st.booleans(), label="dynamic"), harness.fast_options(impl))


@pytest.mark.clause("CC-21", "CC-14", "CC-17")
@pytest.mark.parametrize("kind", guard_models.MUTATING_KINDS)
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("process", len(guard_models.MUTATING_KINDS)))
def test_state_the_method_mutates(impl, kind, data):
    """CC-21: the guards hold the state from before the cold call. A method that increments a counter it reads, or
    appends to a list argument: a warm process starting as the cold one did loads the file and traces nothing
    (CC-14); one starting from the state the cold call left (the counter at 1, a history of one) is not served the
    cold graph."""
    case = {"kind": kind, "seed": data.draw(cst.seeds, label="seed"), "rows": data.draw(st.integers(1, 6),
            label="rows"), "width": data.draw(st.integers(1, 5), label="width")}
    dynamic = data.draw(st.booleans(), label="dynamic")
    with harness.scratch() as base:
        _cold(impl, case, dynamic, harness.fast_options(impl), base)
        again = _run(impl, case, "cold", dynamic, harness.fast_options(impl), base)
        assert_worker_ok(again, what="warm run starting as the cold one")
        assert [c["outcome"] for c in again["calls"]] == ["equal"], f"CC-14: {again['calls']}"
        assert again["unique_graphs"] == 0, f"CC-14: the warm run traced; warnings: {again['warnings']}"
        after = _run(impl, case, "warm", dynamic, harness.fast_options(impl), base)
    _assert_never_served_silently(after, "first")


@pytest.mark.clause("CC-22", "CC-14", "CC-20")
@given(data=st.data())
@settings(max_examples=profiles.examples("process"))
def test_another_hash_seed_loads_the_same_file(impl, data):
    """CC-22: a method holding a set constant, cached under one PYTHONHASHSEED, loads untraced under another or
    none (random), with the cold run's result."""
    cold_seed = data.draw(st.integers(0, 2**32 - 1), label="cold_hash_seed")
    warm_seed = data.draw(st.one_of(st.none(), st.integers(0, 2**32 - 1).filter(lambda s: s != cold_seed)),
                          label="warm_hash_seed")
    case = {"kind": "set_constant", "seed": data.draw(cst.seeds, label="seed"),
            "name": data.draw(st.sampled_from(["gamma", "omega"]), label="name"),
            "rows": data.draw(st.integers(1, 6), label="rows")}
    options = harness.fast_options(impl)
    with harness.scratch() as base:
        _cold(impl, case, True, options, base, env={"PYTHONHASHSEED": str(cold_seed)})
        warm = _run(impl, case, "warm", True, options, base,
                    env={"PYTHONHASHSEED": None if warm_seed is None else str(warm_seed)})
    assert_worker_ok(warm, what="warm run")
    assert warm["unique_graphs"] == 0, (f"CC-22: under PYTHONHASHSEED={warm_seed} (cold {cold_seed}) the warm run "
                                        f"traced; warnings: {warm['warnings']}; logs: {warm['logs']}")
    assert any("loaded from" in m for m in messages_at(warm, logging.INFO)), f"CC-20: no load: {warm['logs']}"
    assert [c["outcome"] for c in warm["calls"]] == ["equal"], warm["calls"]
