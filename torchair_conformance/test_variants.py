"""CC-23 (variants a cache keeps) and CC-17 (a rebuilt file is saved in every mode): fresh processes that differ in a
guarded global, one cache folder."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torchair_conformance import harness, profiles
from torchair_conformance import strategies as cst
from torchair_conformance.assertions import assert_worker_ok, messages_at


def _job(width: int, seed: int, batch: int, root: str, ge_cache: bool) -> dict:
    module = {"kind": "stack", "seed": seed, "dtype": "float32",
              "structure": {"class_name": "ThreadNet", "in_features": width,
                            "layers": [{"kind": "linear", "out": width, "bias": True}, {"kind": "act", "fn": "relu"}]}}
    inputs = [{"shape": [batch, width], "dtype": "float32", "seed": 1, "layout": "contiguous"}]
    return {"module": module, "config": [], "compare_eager": True, "calls": [{"inputs": inputs}],
            "cache_compile": {"dynamic": True, "cache_dir": root, "ge_cache": ge_cache}}


@pytest.mark.clause("CC-23", "CC-17", "CC-21")
@pytest.mark.uses_default_config
@pytest.mark.parametrize("ge_cache", [False, True], ids=["plain", "ge_cache"])
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("inductor", 2))
def test_processes_with_other_thread_counts_each_warm_start_from_one_folder(impl, ge_cache, data):
    """Processes alternate between two thread counts (part of Dynamo's GLOBAL_STATE guard) on one cache folder,
    with the implementation's true default config. Once each count has run, each warm-starts: no trace (CC-23; a
    rebuilt file was saved, with `ge_cache=True` too: CC-17). Every output equals eager's (CC-21). A process that
    compiled a new variant said which field differs, with both values."""
    width = data.draw(st.integers(2, profiles.active().max_width), label="width")
    seed = data.draw(cst.seeds, label="param_seed")
    batch = data.draw(st.integers(1, 4), label="batch")
    first, second = data.draw(st.permutations([1, 2]), label="thread_counts")
    with harness.scratch() as base:
        job = _job(width, seed, batch, str(base / "cache"), ge_cache)
        runs = []
        for threads in (first, second, first, second):
            result = harness.run_worker("warm" if runs else "cold", {**job, "num_threads": threads},
                                        impl=impl.name, cwd=base)
            assert_worker_ok(result, what=f"process with {threads} threads")
            assert max(result["eager_max_diff"]) <= 1e-5, (
                f"CC-21: {threads} threads: output differs from eager by {result['eager_max_diff']}")
            runs.append(result)
    assert runs[0]["unique_graphs"] == 1, runs[0]
    if runs[1]["unique_graphs"]:
        said = " ".join(messages_at(runs[1], logging.WARNING) + runs[1]["warnings"])
        assert "num_threads" in said and str(first) in said and str(second) in said, (
            f"CC-23: the warning for a new variant names the field and both values; got {said!r}")
    for threads, result in zip((first, second), runs[2:]):
        assert result["unique_graphs"] == 0, (
            f"CC-23: the process with {threads} threads traced {result['unique_graphs']} graph(s) although a process "
            f"with {threads} threads had run on this folder (ge_cache={ge_cache}); warnings: {result['warnings']}; "
            f"logs: {result['logs']}")
