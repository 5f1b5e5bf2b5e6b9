"""SPEC CC-12: a second trace of a cached function in the process drops its cache directory and warns."""

from __future__ import annotations

import os

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torchair_conformance import harness, models, profiles
from torchair_conformance import strategies as cst
from torchair_conformance.assertions import assert_outputs_close, assert_warned

# IMPL-2: every test here needs a cache file written on this device.
pytestmark = [pytest.mark.requires("cache")]


class FlagNet(torch.nn.Module):
    """A method with a guarded Python value: changing ``flag`` forces a second trace, whatever ``dynamic`` is."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(width, width)

    def forward(self, x: torch.Tensor, flag: bool) -> torch.Tensor:
        y = self.proj(x)
        return torch.relu(y) if flag else torch.tanh(y)

    def decode(self, x: torch.Tensor, flag: bool) -> torch.Tensor:
        return self.proj(x) * 2


def _func_dir(path: str) -> str:
    return os.path.dirname(path)


@pytest.mark.clause("CC-12")
@pytest.mark.parametrize("trigger", ["new shape, dynamic=False", "new Python value on a guarded path"])
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("compile", 2))
def test_recompile_removes_func_dir_and_warns(impl, trigger, data):
    width = data.draw(st.integers(1, profiles.active().max_width), label="width")
    batches = data.draw(st.lists(st.integers(2, 9), min_size=3, max_size=3, unique=True), label="batches")
    options = data.draw(cst.config_options(fast=impl.fast_cache_options(), global_options=False), label="config")
    dynamic = False if trigger.startswith("new shape") else data.draw(st.booleans(), label="dynamic")
    harness.fresh_dynamo()
    torch.manual_seed(data.draw(cst.seeds, label="param_seed"))
    m = FlagNet(width).to(models.device()).eval()
    if trigger.startswith("new shape"):
        calls = [((torch.randn(b, width, device=models.device()), True), {}) for b in batches]
    else:
        x = torch.randn(batches[0], width, device=models.device())
        calls = [((x, True), {}), ((x, False), {}), ((x, True), {})]
    config = harness.make_config(impl, options)
    with harness.scratch() as base:
        sibling = impl.cache_compile(m.decode, config=config, dynamic=dynamic, cache_dir=str(base))
        sibling(*calls[0][0])
        compiled = impl.cache_compile(m.forward, config=config, dynamic=dynamic, cache_dir=str(base))
        compiled(*calls[0][0])
        files = harness.cache_files(base)
        ours = [f for f in files if os.path.basename(_func_dir(f)) == "forward"]
        theirs = [f for f in files if os.path.basename(_func_dir(f)) == "decode"]
        assert len(ours) == 1 and len(theirs) == 1, f"expected forward and decode cache files, found {files!r}"
        func_dir, model_info_dir = _func_dir(ours[0]), os.path.dirname(_func_dir(ours[0]))

        with harness.capture(impl.logger) as captured:
            out = compiled(*calls[1][0])
        assert_warned(captured, UserWarning, ["Skip cache as", "recompiled"], what=f"CC-12 after a {trigger}")
        assert not os.path.exists(func_dir), f"the <func> directory {func_dir} survived a recompile"
        assert os.path.isdir(model_info_dir), f"the <model_info> directory {model_info_dir} was removed too"
        assert os.path.exists(theirs[0]), f"the sibling function's cache {theirs[0]} was removed too"
        with torch.no_grad():
            assert_outputs_close(out, m.forward(*calls[1][0]), what="result after the recompile")
            assert_outputs_close(compiled(*calls[2][0]), m.forward(*calls[2][0]), what="a later call")
        assert not os.path.exists(func_dir), f"{func_dir} was written again after the recompile in the same process"
