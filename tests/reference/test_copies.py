"""CC-24: a module holding a cached method is deep-copied and pickled; the copy computes its own module's outputs."""
from __future__ import annotations

import copy
import pickle
from pathlib import Path

import torch

import torchair_ref
from tests.conftest import run_program


class Held(torch.nn.Module):
    def __init__(self, cache_dir: str) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        config = torchair_ref.CompilerConfig()
        config.debug.run_eagerly = True
        decompositions = torch._decomp.get_decompositions([torch.ops.aten.gelu])
        self.cached = torchair_ref.inference.cache_compile(self.run, config=config, cache_dir=cache_dir,
                                                           custom_decompositions=decompositions)

    def run(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(self.fc(x))


def test_deepcopy_and_pickle_copy_the_cached_callable_for_the_copy(tmp_path: Path) -> None:
    """Before and after the first call: the copy never raises (today's `_thread.RLock` error), holds a callable of
    its own bound to the copy (a copy whose weights change computes with its weights), and keeps the options."""
    model = Held(str(tmp_path / "cache"))
    x = torch.randn(2, 4)
    before = copy.deepcopy(model)
    expected = model.cached(x)
    for twin in (before, copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        assert twin.cached is not model.cached and twin.cached.cache_file is None  # resolved at its first call
        assert torch.equal(twin.cached(x), expected)
        with torch.no_grad():
            twin.fc.weight.add_(1.0)
            assert torch.allclose(twin.cached(x), twin.run(x)) and not torch.allclose(twin.cached(x), expected)
        assert twin.cached.cache_file == model.cached.cache_file


def test_a_pickled_module_warm_starts_in_a_fresh_process(tmp_path: Path) -> None:
    """A process compiles and pickles the module; a fresh process unpickles it: its first call loads the file the
    first process wrote (no trace) and equals eager."""
    job = {"cache_dir": str(tmp_path / "cache"), "pickle_out": str(tmp_path / "model.pkl")}
    cold = run_program("variant_run", job, tmp_path)
    warm = run_program("variant_run", {"pickle_in": str(tmp_path / "model.pkl")}, tmp_path)
    assert cold["equal"] and cold["unique_graphs"] == 1, cold
    assert warm["equal"] and warm["unique_graphs"] == 0 and not warm["warnings"], warm
