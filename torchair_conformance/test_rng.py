"""SPEC CC-13: a graph with an operator that depends on the random generator is rejected, in every mode."""

from __future__ import annotations

import pytest
import torch
import torch._dynamo.exc
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from torchair_conformance import harness, models, profiles
from torchair_conformance import strategies as cst
from torchair_conformance.assertions import assert_chain_contains, assert_no_cache_file

# IMPL-2: every test here needs a cache file written on this device.
pytestmark = [pytest.mark.requires("cache"), pytest.mark.requires("rng_rejection")]

RNG_MESSAGE = "Cache compile does not support operator that depend on RNG"

# Each entry turns an activation y (2-D, float) into something that depends on the generator.
RNG_OPS = {
    "randn": lambda y: y + torch.randn(y.shape, device=y.device),
    "randn_like": lambda y: y + torch.randn_like(y),
    "rand_like": lambda y: y * torch.rand_like(y),
    "randint_like": lambda y: y + torch.randint_like(y, 0, 3),
    "normal": lambda y: y + torch.normal(torch.zeros_like(y), 1.0),
    "bernoulli": lambda y: y * torch.bernoulli(torch.full_like(y, 0.5)),
    "dropout(training=True)": lambda y: F.dropout(y, p=0.5, training=True),
    "multinomial": lambda y: y[:, :1] + torch.multinomial(y.abs() + 0.1, 1).to(y.dtype),
    "randperm": lambda y: y[:, torch.randperm(y.shape[1])],
}


class RngNet(torch.nn.Module):
    def __init__(self, width: int, op: str) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(width, width)
        self.op = op

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return RNG_OPS[self.op](self.proj(x))


@pytest.mark.clause("CC-13")
@pytest.mark.parametrize("mode", cst.mode_params())
@pytest.mark.parametrize("op", sorted(RNG_OPS))
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("compile", len(RNG_OPS)))
def test_rng_graphs_are_rejected_on_the_first_call(impl, mode, op, data):
    width = data.draw(st.integers(2, profiles.active().max_width), label="width")
    batch = data.draw(st.integers(2, 6), label="batch")
    dynamic = data.draw(st.booleans(), label="dynamic")
    options = data.draw(cst.config_options(modes=(mode,), fast=harness.fast_options(impl), global_options=False),
                        label="config")
    harness.fresh_dynamo()
    m = RngNet(width, op).to(models.device()).eval()
    with harness.scratch() as base:
        compiled = impl.cache_compile(m.forward, config=harness.make_config(impl, options), dynamic=dynamic,
                                      cache_dir=str(base))
        with pytest.raises(torch._dynamo.exc.BackendCompilerFailed) as info:
            compiled(torch.randn(batch, width, device=models.device()))
        assert_chain_contains(info.value, RNG_MESSAGE, what=f"CC-13 for {op}")
        assert_no_cache_file(base, why=f"a graph with {op} must not be cached")
