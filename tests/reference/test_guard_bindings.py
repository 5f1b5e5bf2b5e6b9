"""White-box: a stored per-call check's constants rebuilt from the record's replay table (`guard_bindings`; SPEC
CC-14, CC-21; issue 29 item 7): the same constants as writing the check from every spec, or no replay at all."""
from __future__ import annotations

import builtins
import json
import math
import threading
from pathlib import Path

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from tests.reliability.faults import Net, X, cold
from torchair_ref.inference import artifact, bytecode, guard_bindings, guard_check, guard_values, loading, record
from torchair_ref.inference.guard_kinds import identity

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                     st.text(max_size=8))


@given(st.one_of(_SCALARS, st.tuples(_SCALARS, _SCALARS), st.lists(_SCALARS, max_size=3).map(tuple)))
def test_a_literal_rebuilds_from_json_as_the_same_value_of_the_same_types(value: object) -> None:
    """A literal's recipe, through the file's JSON, rebuilds an equal value whose types (bool, int, float, str,
    tuple and theirs) are the bound one's."""
    made = json.loads(json.dumps(guard_bindings.recipe(value)))
    found = guard_bindings.rebuilt(made)
    assert found == value and type(found) is type(value)
    if isinstance(value, tuple):
        assert [type(item) for item in found] == [type(item) for item in value]


@pytest.mark.parametrize("value", [float("nan"), -float("inf"), [1], {1}, {"a": 1}, object(), (1, [2]), (math.nan,),
                                   lambda: None, torch.zeros(1), print, exec, open, getattr])
def test_a_value_without_a_recipe_has_none(value: object) -> None:
    """What a recipe cannot rebuild as the same value has none: the spec that bound it is written again."""
    assert guard_bindings.recipe(value) is None


def test_a_helper_is_ours_even_where_the_process_replaced_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A builtin the check binds rebuilds as the one this package took at import, not one a process put in its
    place later (a replay never binds code that is not ours)."""
    made = guard_bindings.recipe(len)
    assert made == {"helper": "builtins.len"}
    monkeypatch.setattr(builtins, "len", lambda value: 0)
    assert guard_bindings.rebuilt(made) is guard_bindings._HELPERS["builtins.len"] is not builtins.len


def test_a_class_recipe_checks_the_recorded_digest() -> None:
    """A class bound where its digest matched (TYPE_MATCH) rebuilds only while the live class has that digest."""
    made = guard_bindings.class_recipe(guard_values.qualified_name(Net), guard_values.class_digest(Net, ["forward"]),
                                       ("forward",))
    assert made["members"] == ["forward"]  # JSON's list, whatever sequence was given
    assert guard_bindings.rebuilt(made) is Net
    with pytest.raises(LookupError):  # the digest was of `forward` alone
        guard_bindings.rebuilt({**made, "members": ["forward", "__init__"]})
    with pytest.raises(LookupError):
        guard_bindings.rebuilt({**made, "digest": "0" * 64})
    with pytest.raises(LookupError):
        guard_bindings.rebuilt({"class": "tests.reliability.faults.NoSuchNet"})


def _warm(path: Path, payload: dict | None = None) -> tuple[record.CacheRecord, dict, object]:
    """A record read as a warm start reads it, its per-call check made around a no-op, and that check's namespace."""
    payload = payload or artifact.decode(path.read_bytes())
    net = Net()
    function = type(net).forward
    with guard_values.digests_kept():
        loaded = record.CacheRecord.from_payload(payload)
        module_globals = bytecode.ModuleView(function.__globals__)
        module_globals.update(bytecode.injected_objects(loaded.globals))
        check = guard_check.guarded_method(function, lambda *a, **k: "ran", loaded.guards,
                                           lambda spec, *a, **k: "failed", module_globals,
                                           stored=loaded.extra["guard_code"])
    return loaded, check.__globals__, lambda x: check(net, x)


def _constants(namespace: dict) -> dict:
    return {name: value for name, value in namespace.items() if name.startswith("_tq_b")}


def test_the_replay_binds_what_writing_every_spec_binds(tmp_path: Path) -> None:
    """CC-14: a warm start that rebuilds the stored check's constants from the replay table reads only the specs it
    re-runs and those checked at load, and binds, name by name, what writing the check from every spec binds: the
    same objects, equal literals of the same types, ID_MATCH memories of the same description."""
    case = cold(tmp_path)
    payload = artifact.decode(case.valid)
    replayed, replayed_ns, call = _warm(case.path, payload)
    assert call(X) == "ran"
    typed = sum(spec is not None for spec in replayed.guards._typed)
    assert typed < len(payload["guards"]) - 10, typed
    without = json.loads(json.dumps(payload))
    del without["guard_code"]["replay"]
    full, full_ns, call = _warm(case.path, without)
    assert call(X) == "ran"
    assert all(spec is not None for spec in full.guards._typed)
    ours, theirs = _constants(replayed_ns), _constants(full_ns)
    assert set(ours) == set(theirs)
    for name, value in theirs.items():
        if isinstance(value, identity._Known):
            assert ours[name].described == value.described
        elif isinstance(value, dict):  # GLOBAL_STATE's two C++ checks: made afresh by each
            assert set(ours[name]) == set(value)
        else:
            assert guard_bindings._same(ours[name], value), name


@pytest.mark.parametrize("change", ["another writer", "a damaged table", "a class that changed"])
def test_no_replay_where_it_could_differ(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    """A table written by other code, one that is damaged, or one whose class recipe no longer holds (the class
    gained a member): the warm start reads every spec and writes the check from them, which then checks right."""
    case = cold(tmp_path)
    payload = artifact.decode(case.valid)
    if change == "another writer":
        monkeypatch.setattr(guard_check, "writer_digests", lambda: ["code:" + "0" * 64])
    elif change == "a damaged table":
        payload["guard_code"]["replay"]["binds"] = {"_tq_b0": [{"helper": "builtins.no_such_thing"}]}
    else:
        monkeypatch.setattr(Net, "gained", 1, raising=False)
    rebuilt = []
    real = guard_bindings.replayed
    monkeypatch.setattr(guard_bindings, "replayed", lambda *a, **k: rebuilt.append(real(*a, **k)) or rebuilt[-1])
    loaded, _, call = _warm(case.path, payload)
    assert rebuilt and rebuilt[-1] is None
    assert call(X) == ("failed" if change == "a class that changed" else "ran")
    assert all(spec is not None for spec in loaded.guards._typed)  # the check was written from every spec


def test_naming_a_failing_check_leaves_the_constants_calls_read(tmp_path: Path) -> None:
    """After a replay, the first rejected calls write the checks one by one (the slow path that names the failing
    one), here from four threads at once: that binds constants of its own, never in the namespace the calls read,
    whose every constant stays the object the replay bound, and each call is rejected."""
    case = cold(tmp_path)
    _, namespace, call = _warm(case.path)
    before = dict(_constants(namespace))
    results: list[object] = []
    threads = [threading.Thread(target=lambda: results.append(call(X[:1]))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == ["failed"] * 4
    assert call(X) == "ran"
    after = _constants(namespace)
    assert set(after) == set(before) and all(after[name] is value for name, value in before.items())



def _load_time(payload: dict, net: Net) -> tuple[record.CacheRecord, bytecode.ModuleView]:
    function = type(net).forward
    loaded = record.CacheRecord.from_payload(payload)
    module_globals = bytecode.ModuleView(function.__globals__)
    module_globals.update(bytecode.injected_objects(loaded.globals))
    return loaded, module_globals


def test_the_load_time_check_is_replayed_and_a_misfit_is_named_from_the_specs(tmp_path: Path) -> None:
    """CC-17/CC-21: the module's tensors are checked where the file loads by the stored check, each `TensorSpec`
    rebuilt from its replay table: none of their specs is read. A parameter of another size fails that check, and
    the check written from the specs then names the guard that fails (the file is stale)."""
    payload = artifact.decode(cold(tmp_path).valid)
    stored = payload["guard_code"]["first"]
    assert stored["replay"]["rerun"] == [] and stored["replay"]["call"]
    net = Net()
    loaded, module_globals = _load_time(payload, net)
    at = loaded.guards.first["call"]
    assert {payload["guards"][index]["check"] for index in at} == {"tensor"}
    assert guard_check.first_replayed(stored, loaded.guards, net, Net.forward, module_globals)
    assert loading.load_time_failure(loaded, net.forward, module_globals) is None
    assert all(loaded.guards._typed[index] is None for index in at)  # no spec read
    net.fc1.weight = torch.nn.Parameter(torch.zeros(8, 5))
    assert not guard_check.first_replayed(stored, loaded.guards, net, Net.forward, module_globals)
    failed = loading.load_time_failure(loaded, net.forward, module_globals)
    assert failed is not None and "TENSOR_MATCH failed" in failed and "size [8, 5]" in failed, failed


@pytest.mark.parametrize("change", ["another writer", "a damaged table", "a table that is not JSON's", "no table"])
def test_a_load_time_table_not_ours_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                change: str) -> None:
    """A load-time table written by other code, damaged, or absent (a record from before it): the specs are read
    when the file loads and the check is written from them, which holds for the same module."""
    payload = artifact.decode(cold(tmp_path).valid)
    if change == "another writer":
        monkeypatch.setattr(guard_check, "writer_digests", lambda: ["code:" + "0" * 64])
    elif change == "a damaged table":
        payload["guard_code"]["first"]["replay"]["binds"] = {"_tq_b0": [{"made": "tensor", "data": {"dtype": 1}}]}
    elif change == "a table that is not JSON's":
        payload["guard_code"]["first"]["replay"]["binds"] = {"_tq_b0": [{"made": "tensor", "data": 5}]}
    else:
        del payload["guard_code"]["first"]["replay"]
    net = Net()
    loaded, module_globals = _load_time(payload, net)
    assert not guard_check.first_replayed(payload["guard_code"]["first"], loaded.guards, net, Net.forward,
                                          module_globals)
    assert loading.load_time_failure(loaded, net.forward, module_globals) is None
    assert all(spec is not None for spec in loaded.guards.load_only())


def test_a_table_is_checked_once_and_a_plain_one_always(tmp_path: Path) -> None:
    """The record checks its replay tables where it loads (`guard_bindings.check`, a `Checked` copy), and the warm
    start's replay does not check that copy again; a table that reaches the replay as a plain dict (not from a
    record) is checked there, and a damaged one is not used."""
    case = cold(tmp_path)
    table = artifact.decode(case.valid)["guard_code"]["replay"]
    checked = guard_bindings.check(table)
    assert type(checked) is guard_bindings.Checked and checked == table and guard_bindings.check(checked) is checked
    damaged = {**table, "call": [-1]}
    assert guard_bindings.check(damaged) is None
    assert guard_bindings.replayed(damaged, guard_check.writer_digests(), [], lambda index: None) is None
