"""A global Dynamo names after an object's address (`G['_<id>_c<n>']`) is recorded by what it holds (CC-14, CC-21,
CC-22; issue 29).

`type(x)` on a tensor makes Dynamo install the torch module under `_<id(torch)>_c<compile id>` and guard on
`G['_<id>_c1'].Tensor`; `transformers` does this in every model (GPT-2, BERT, Llama, T5). The name means nothing in
another process, so the file records the module by name, and a warm process binds the name to its own torch and
loads untraced.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.reference import warm_guards
from tests.reference.warm_guards import Case
from torchair_ref.inference import bytecode, guard_spec

pytestmark = pytest.mark.slow

BODY = """
class Model(torch.nn.Module):
    def __init__(self, options):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.cached = torchair_ref.inference.cache_compile(self.run, **options)

    def run(self, x):
        if type(x) is torch.Tensor:
            return self.lin(x) * 2
        return self.lin(x)


def build(options):
    return Model(options).eval()


def cold(model):
    yield (model, (torch.randn(2, 4),), {{}})


def warm(model):
    {change}
    yield (model, (torch.randn(2, 4),), {{}})
"""


def _case(change: str = "pass") -> Case:
    return Case(BODY.format(change=change))


def test_a_source_through_an_address_global_parses() -> None:
    assert guard_spec.parse_source("G['_140012345678_c1'].Tensor") == (["G", "_140012345678_c1"], [["attr", "Tensor"]])


def test_an_address_global_is_injected_and_described_by_what_it_holds() -> None:
    import torch

    code = compile("__compiled_fn_1_ab(x) if _140012345678_c1.Tensor else x", "<traced>", "eval")
    module_globals = {"__compiled_fn_1_ab": len, "_140012345678_c1": torch, "_140012345678_cx": torch}
    refs = bytecode.injected_globals(code, module_globals, also=["_140012345678_c1", "_140012345678_cx"])
    assert refs["_140012345678_c1"] == {"module": "torch"}
    assert "_140012345678_cx" not in refs  # not Dynamo's form: a user global, read live
    assert bytecode.injected_objects(refs)["_140012345678_c1"] is torch
    assert not bytecode.is_injected_global("conv_1_c2")  # a user's global of a similar form is read live


def test_type_of_a_tensor_warm_starts_untraced(tmp_path: Path) -> None:
    """CC-14: the file is written, and a warm process loads it and traces nothing."""
    case = _case()
    script = warm_guards.write(tmp_path, "type_of_tensor", case)
    cold = warm_guards.cold_cache(script, case, tmp_path)
    assert not [w for w in cold["warnings"] if "not cached" in w], cold["warnings"]
    report = warm_guards.run(script, "cold", case, warm_guards.copy_cache(tmp_path, tmp_path / "warm"))
    warm_guards.assert_loaded(report)
    assert report["unique_graphs"] == 0, report["warnings"]
