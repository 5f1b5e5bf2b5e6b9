"""SPEC CC-8's ``<dist>`` level in a real ``torch.distributed`` gloo world of 2 ranks on 127.0.0.1."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torchair_conformance import harness, models, profiles
from torchair_conformance import strategies as cst
from torchair_conformance.assertions import assert_worker_ok

# IMPL-2: every test here needs a cache file written on this device.
pytestmark = [pytest.mark.requires("cache")]


@pytest.mark.clause("CC-8", "CC-7")
@given(data=st.data())
@settings(max_examples=profiles.examples("process"))
def test_each_rank_of_a_two_rank_world_has_its_own_level(impl, data):
    module = data.draw(cst.module_specs(max_depth=2), label="module")
    inputs = data.draw(cst.input_specs(module, layouts=("contiguous",)), label="inputs")
    per_rank = [data.draw(cst.ranks(), label=f"ranks of process {r}") for r in range(2)]
    options = impl.fast_cache_options()
    m = models.build_module(module["structure"], module["seed"])
    with harness.scratch() as base:
        root = str(base / "cache")
        jobs = [{"module": module, "config": [list(o) for o in options],
                 "cache_compile": {"dynamic": True, "cache_dir": root, **ranks},
                 "calls": [{"inputs": inputs}]} for ranks in per_rank]
        results = harness.run_ranks(jobs, impl=impl.name, cwd=base)
        found = harness.cache_files(root)
    expected = []
    for rank, (result, ranks) in enumerate(zip(results, per_rank)):
        assert_worker_ok(result, what=f"rank {rank}")
        assert (result["rank"], result["world_size"]) == (rank, 2), f"rank {rank} saw {result}"
        expected.append(harness.expected_cache_file(impl, m, "forward", options, dynamic=True, root=root,
                                                    ranks=ranks, world_size=2, rank=rank))
    assert found == sorted(set(expected)), (
        f"expected the cache files {sorted(set(expected))!r} (world2global_rank<R> per rank), found {found!r}; "
        f"ranks drawn {per_rank!r}")
