"""Tensor constants of a compiled graph are written as data and read back exactly (CC-14; issue 29's served
prompts: `transformers` builds tensors from Python numbers inside a prompt)."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.reference import warm_guards
from tests.reference.warm_guards import Case
from torchair_ref.compilers import constants
from torchair_ref.errors import UncacheableError


def test_constants_round_trip_with_their_layout() -> None:
    base = torch.arange(24, dtype=torch.float64).reshape(4, 6)
    held = {"plain": torch.tensor([1.5, -2.0]), "view": base[1:, ::2].t(), "ints": torch.tensor([[1, 2]]),
            "flag": torch.tensor(True), "empty": torch.empty(0, 3), "half": torch.tensor([0.1], dtype=torch.bfloat16)}
    back = constants.decode(constants.encode(held))
    assert sorted(back) == sorted(held)
    for name, tensor in held.items():
        got = back[name]
        assert (got.dtype, got.shape, got.stride(), got.storage_offset()) == (
            tensor.dtype, tensor.shape, tensor.stride(), tensor.storage_offset()), name
        assert torch.equal(got, tensor), name


@pytest.mark.parametrize("held", [
    {"sparse": torch.eye(2).to_sparse()},
    {"sub": torch.nn.Parameter(torch.ones(2))},
    {"conj": torch.tensor([1 + 2j]).conj()},
    {"big": torch.zeros(constants.MAX_BYTES // 4 + 1)},
    {"module": torch.nn.Linear(2, 2)},
])
def test_what_cannot_be_kept_is_uncacheable_with_its_name(held: dict) -> None:
    name = next(iter(held))
    with pytest.raises(UncacheableError, match=name if name != "big" else "more than"):
        constants.encode(held)


def test_an_entry_that_reaches_outside_its_bytes_is_refused() -> None:
    [entry] = constants.encode({"c": torch.arange(4.0)}).values()
    for change in ({"size": [5]}, {"offset": 1}, {"stride": [2]}, {"stride": [-1]}, {"size": [2, 2]}):
        with pytest.raises(ValueError, match="do not fit"):
            constants.decode({"c": {**entry, **change}})
    with pytest.raises(ValueError, match="dtype"):
        constants.decode({"c": {**entry, "dtype": "Tensor"}})


BODY = """
class Model(torch.nn.Module):
    def __init__(self, options):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.cached = torchair_ref.inference.cache_compile(self.run, **options)

    def run(self, x):
        scale = torch.tensor([1.0, -2.0, 0.5, 3.0])
        return self.lin(x) * scale + torch.tensor([[0, 1, 2, 3]])


def build(options):
    return Model(options).eval()


def cold(model):
    yield (model, (torch.randn(2, 4),), {})


def warm(model):
    yield (model, (torch.randn(3, 4),), {})
"""


@pytest.mark.slow
def test_a_method_building_tensors_from_numbers_warm_starts_untraced(tmp_path: Path) -> None:
    """CC-14: the file is written (no "is not cached"), and a warm process loads it, traces nothing and equals
    eager at another batch size."""
    case = Case(BODY)
    script = warm_guards.write(tmp_path, "constants", case)
    cold = warm_guards.cold_cache(script, case, tmp_path)
    assert not [w for w in cold["warnings"] if "not cached" in w], cold["warnings"]
    report = warm_guards.run(script, "later", case, warm_guards.copy_cache(tmp_path, tmp_path / "warm"))
    warm_guards.assert_loaded(report)
    assert report["unique_graphs"] == 0, report["warnings"]
    assert [c["outcome"] for c in report["calls"]] == ["equal", "equal"], report["calls"]
