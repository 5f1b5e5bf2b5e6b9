"""CC-24: a module holding a cached method can be deep-copied and pickled; the copy computes the same outputs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torchair_conformance import harness, profiles
from torchair_conformance import strategies as cst
from torchair_conformance.assertions import assert_worker_ok


@pytest.mark.clause("CC-24", "CC-14")
@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
@pytest.mark.parametrize("phase", ["cold", "warm"])
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("process", 4))
def test_a_module_holding_a_cached_method_copies(impl, how, phase, data):
    """The README's pattern (`self.cached = cache_compile(...)` held by the module), after its first call in a cold
    or a warm process: `copy.deepcopy` or a pickle round trip of the module never raises for holding the cache, and
    the copy's callable computes what the original computed."""
    module = data.draw(cst.module_specs(max_depth=1), label="module")
    inputs = data.draw(cst.input_specs(module), label="inputs")
    job = {"module": module, "config": [list(o) for o in harness.fast_options(impl)],
           "calls": [{"inputs": inputs}], "cache_compile": {"dynamic": data.draw(st.booleans(), label="dynamic")}}
    with harness.scratch() as base:
        job["cache_compile"]["cache_dir"] = str(base / "cache")
        if phase == "warm":
            assert_worker_ok(harness.run_worker("cold", job, impl=impl.name, cwd=base), what="cold run")
        result = harness.run_worker(phase, {**job, "copy": how}, impl=impl.name, cwd=base)
    assert_worker_ok(result, what=f"{phase} run")
    assert result["copy_error"] is None, (
        f"CC-24: {how} of a module holding a cached method raised {result['copy_error']['type']}: "
        f"{result['copy_error']['message']}")
    assert result["copy_digests"] == result["digests"], (
        f"CC-24: the {how} copy computed other outputs than the original ({phase})")
