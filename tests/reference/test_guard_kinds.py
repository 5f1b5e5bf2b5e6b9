"""The guard kinds' registry (SPEC CC-21, CC-22; issue 34 item 2): one entry per kind, typed specs that a record
stores and reads back, and a kind added in one module: EQUALS_MATCH on a dtype or device (`guard_kinds/torch_values`),
which caches the GPT block that builds its causal mask with `torch.ones(t, t, dtype=torch.bool)`."""
from __future__ import annotations

import dataclasses
import types
from pathlib import Path

import pytest
import torch

from tests.reference import warm_guards
from tests.reference.warm_guards import Case
from torchair_ref.inference import guard_check, guard_kinds
from torchair_ref.inference.guard_kinds import RawGuard, UnknownGuard

FIXED = frozenset({"self"})


def raw(kind: str, source: str | None, text: str, value=None) -> RawGuard:
    return RawGuard(kind, source, (text,), value, FIXED, frozenset())


def test_every_kind_is_one_registered_dataclass_with_its_own_check_name():
    assert set(guard_kinds.CHECKS) >= {"class", "object", "constant", "equals", "equals_torch", "length", "contains",
                                       "no_attr", "distinct", "tensor", "expr", "global_state", "function_modes",
                                       "default_device"}
    for check, cls in guard_kinds.CHECKS.items():
        assert cls.check == check and cls.kinds and dataclasses.is_dataclass(cls), cls
        for kind in cls.kinds:
            assert cls in guard_kinds.KINDS[kind]
    with pytest.raises(ValueError, match="already taken"):
        guard_kinds.register(type("Again", (guard_kinds.CHECKS["equals"],), {}))


def test_a_kind_no_entry_translates_is_refused_naming_it():
    with pytest.raises(UnknownGuard, match="DICT_VERSION"):
        guard_kinds.translate(raw("DICT_VERSION", "G['table']", "___dict_version(G['table']) == 7", {}))
    assert guard_kinds.translate(raw("DIMENSION_DYNAMIC_MARKING_GUARD", "L['x']", "...")) == []


@pytest.mark.parametrize("guard", [
    raw("EQUALS_MATCH", "G['torch'].bool", "G['torch'].bool == torch.bool", torch.bool),
    raw("EQUALS_MATCH", "L['self'].device", "L['self'].device == device('cpu')", torch.device("cpu")),
    raw("EQUALS_MATCH", "L['self'].mode", "L['self'].mode == 'a'", "a"),
    raw("EQUALS_MATCH", "L['self'].shape", "L['self'].shape == (2, 3)", (2, 3)),
    raw("TYPE_MATCH", "L['self']", "___check_type_id(L['self'], 1)", torch.nn.Linear(2, 2)),
    raw("ID_MATCH", "G['torch']", "___check_obj_id(G['torch'], 1)", torch),
    raw("NONE_MATCH", "L['self'].cache", "L['self'].cache is None"),
    raw("LENGTH_CHECK", "L['self'].items", "len(L['self'].items) == 2", [1, 2]),
    raw("DICT_CONTAINS", "L['self'].__dict__", "not ___dict_contains('forward', L['self'].__dict__)"),
    raw("LAMBDA_GUARD", None, "L['self'].n >= 2"),
])
def test_each_spec_round_trips_through_the_record_form(guard):
    specs = guard_kinds.translate(guard)
    assert specs
    for spec in specs:
        assert guard_kinds.from_json(spec.to_json()) == spec
    with pytest.raises(UnknownGuard):
        guard_kinds.from_json({**specs[0].to_json(), "when": "sometimes"})


def test_a_spec_read_from_a_record_is_the_one_its_constructor_makes():
    """`from_json` sets a spec's fields without calling the dataclass's `__init__`: the spec equals the constructed
    one, a text longer than a spec keeps is clipped as the constructor clips it, a field that is missing or a text
    that is not a string is refused, and the spec stays frozen."""
    spec = guard_kinds.translate(raw("NONE_MATCH", "L['self'].cache", "L['self'].cache is None"))[0]
    stored = spec.to_json()
    read = guard_kinds.from_json({**stored, "text": "x" * 500})
    assert read == dataclasses.replace(spec, text="x" * 500) and read.text == "x" * 300
    with pytest.raises(UnknownGuard, match="lacks \\['when'\\]"):
        guard_kinds.from_json({k: v for k, v in stored.items() if k != "when"})
    with pytest.raises(TypeError):
        guard_kinds.from_json({**stored, "text": 3})
    with pytest.raises(dataclasses.FrozenInstanceError):
        read.when = "first"  # type: ignore[misc]


def test_a_dtype_compared_by_equality_is_its_own_kind():
    """The kind added in one module: a dtype or device is stored by its text and checked by type and equality."""
    specs = guard_kinds.translate(raw("EQUALS_MATCH", "L['self'].dtype", "L['self'].dtype == torch.bool", torch.bool))
    assert [(s.check, s.value, s.type) for s in specs] == [("equals_torch", "torch.bool", "torch.dtype")]
    module = types.SimpleNamespace(dtype=torch.bool)
    assert guard_check.first_call_failure(specs, module, _method, {}) is None
    for other in (torch.float32, True, "torch.bool"):
        module.dtype = other
        assert "EQUALS_MATCH failed" in guard_check.first_call_failure(specs, module, _method, {})
    with pytest.raises(UnknownGuard, match="torch.bogus"):
        guard_kinds.from_json({**specs[0].to_json(), "value": "torch.bogus"})


@pytest.mark.parametrize("text", ["not hasattr(L['x'], '_dynamo_dynamic_indices')",
                                  "hasattr(L['x'], '_dynamo_dynamic_indices') == False"])
def test_an_absent_attribute_is_read_in_either_of_dynamos_forms(text):
    """NO_HASATTR as torch 2.13/2.14 write it and as 2.11 does (the torch on the lent GPU machines): one check."""
    specs = guard_kinds.translate(RawGuard("NO_HASATTR", "L['x']", (text,), None, frozenset({"x"}), frozenset()))
    assert [(s.check, s.attr) for s in specs] == [("no_attr", "_dynamo_dynamic_indices")]


@pytest.mark.parametrize("text", ["hasattr(L['x'], 'a') == True", "not hasattr(L['x'], 'a') == False",
                                  "getattr(L['x'], 'a')", "hasattr(L['x'], 'a') != False",
                                  "hasattr(L['x'], 'a')", "not hasattr(L['x'], 1)"])
def test_an_absent_attribute_in_another_form_is_refused(text):
    with pytest.raises(UnknownGuard, match="NO_HASATTR"):
        guard_kinds.translate(RawGuard("NO_HASATTR", "L['x']", (text,), None, frozenset({"x"}), frozenset()))


def _method(self):
    return self


def test_other_values_compared_by_equality_stay_refused():
    with pytest.raises(UnknownGuard, match="a value of type object compared by equality"):
        guard_kinds.translate(raw("EQUALS_MATCH", "L['self'].x", "L['self'].x == ...", object()))


MASKED_BLOCK = """
class Model(torch.nn.Module):
    def __init__(self, options):
        super().__init__()
        self.qkv = torch.nn.Linear(8, 24)
        self.cached = torchair_ref.inference.cache_compile(self.run, **options)

    def run(self, x):
        t = x.shape[1]
        q, k, v = self.qkv(x).split(8, dim=-1)
        mask = torch.ones(t, t, dtype=torch.bool).tril()
        att = (q @ k.transpose(-2, -1)).masked_fill(~mask, float("-inf")).softmax(-1)
        return att @ v


def build(options):
    return Model(options).eval()


def cold(model):
    yield (model, (torch.randn(2, 5, 8),), {})


def warm(model):
    yield (model, (torch.randn(2, 5, 8),), {})
"""


@pytest.mark.slow
def test_a_block_building_a_bool_mask_in_the_cached_method_is_cached(tmp_path: Path):
    """Issue 29's dtype-mask GPT block: cold writes the file, a warm process loads it and traces nothing."""
    case = Case(MASKED_BLOCK, dynamic=False)
    script = warm_guards.write(tmp_path, "masked", case)
    report = warm_guards.cold_cache(script, case, tmp_path)
    assert not [w for w in report["warnings"] if "is not cached" in w], report["warnings"]
    warm = warm_guards.run(script, "warm", case, warm_guards.copy_cache(tmp_path, tmp_path / "warm"))
    warm_guards.assert_loaded(warm)
    assert warm["unique_graphs"] == 0, warm["warnings"]
