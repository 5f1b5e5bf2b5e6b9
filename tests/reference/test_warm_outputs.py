"""Outputs that alias the inputs, and dataclass/namedtuple outputs, cold then warm in fresh processes (CC-14, CC-18).

Upstream caches both (its own system tests assert the file exists: `test_view_as_real_dynamic_sym_cache`,
`test_huggingface_dataclass`); the reference rebuilds aliasing outputs as views of the live inputs
(`compilers.aliases`) and identifies generated dataclass/namedtuple constructors by class and fields
(`inference.generated`).
"""
from __future__ import annotations

import functools
from pathlib import Path

import pytest

from tests.conftest import run_program

pytestmark = pytest.mark.slow

output_program = functools.partial(run_program, "output_run")


def cold_then_warm(tmp_path: Path, **job: object) -> tuple[dict, dict, list[Path]]:
    job = {"cache_dir": str(tmp_path / "cache"), **job}
    cold = output_program(job, tmp_path)
    files = sorted((tmp_path / "cache").rglob("compiled_module"))
    return cold, output_program(job, tmp_path), files


@pytest.mark.parametrize(("dynamic", "run_eagerly"), [(True, False), (False, True)])
def test_view_outputs_are_cached_and_warm_views_of_the_live_inputs(tmp_path: Path, dynamic: bool,
                                                                    run_eagerly: bool) -> None:
    """CC-18: `x.view(-1)`, `x.t()`, a slice, `view_as_real` and the input itself: cached, and at warm start the same
    values, the same storage, views of the same base with the same layout as eager's (never copies)."""
    cold, warm, files = cold_then_warm(tmp_path, method="views", dynamic=dynamic, run_eagerly=run_eagerly)
    assert files, cold["warnings"]
    assert warm["unique_graphs"] == 0 and not warm["warnings"], warm
    for run in (cold, warm):
        assert run["got"] == run["eager"], (run["got"], run["eager"])
    assert warm["got"]["shares"] == [None, 0, 0, 0, 1, 0], warm["got"]
    assert warm["got"]["is_input"] == [None, None, None, None, None, 0], warm["got"]


def test_dynamic_view_outputs_follow_another_batch(tmp_path: Path) -> None:
    """CC-14, CC-18: a dynamic graph loaded warm rebuilds the views for a batch size it was not traced with."""
    cold, _, _ = cold_then_warm(tmp_path, method="views", dynamic=True)
    warm = output_program({"cache_dir": str(tmp_path / "cache"), "method": "views", "dynamic": True, "batch": 5},
                          tmp_path)
    assert warm["unique_graphs"] == 0 and warm["got"] == warm["eager"], warm
    assert warm["got"]["layout"][1][0] == [20], warm["got"]["layout"]


def test_dataclass_and_namedtuple_outputs_are_cached(tmp_path: Path) -> None:
    """CC-18: a HuggingFace-style dataclass and a namedtuple as outputs: cached, warm untraced, eager's types."""
    cold, warm, files = cold_then_warm(tmp_path, method="structs", dynamic=True)
    assert files, cold["warnings"]
    assert warm["unique_graphs"] == 0 and not warm["warnings"], warm
    assert warm["got"]["types"] == ["tuple", "Output", "Pair"], warm["got"]
    for run in (cold, warm):
        assert run["got"] == run["eager"], (run["got"], run["eager"])


def test_a_dataclass_with_other_fields_makes_the_cache_stale(tmp_path: Path) -> None:
    """CC-14, CC-17: the dataclass's generated `__init__` is identified by its fields: a warm process whose class has
    another field discards the file (a warning naming the class) and compiles afresh, with eager's result."""
    cold_then_warm(tmp_path, method="structs", dynamic=True)
    changed = output_program({"cache_dir": str(tmp_path / "cache"), "method": "structs", "dynamic": True,
                              "wide_fields": True}, tmp_path)
    assert changed["unique_graphs"] == 1, changed
    assert any("stale" in w and "Output.__init__" in w for w in changed["warnings"]), changed["warnings"]
    assert changed["got"] == changed["eager"], changed


def test_a_view_of_an_input_the_graph_mutates_is_not_cached(tmp_path: Path) -> None:
    """CC-18: where the compiled graph computes the view apart from its base (the base is mutated in the graph), a
    warm start could not rebuild it from the graph's output: not cached, with a warning saying why."""
    cold = output_program({"cache_dir": str(tmp_path / "cache"), "method": "mutated_view", "dynamic": True},
                          tmp_path)
    assert not list((tmp_path / "cache").rglob("compiled_module")), cold
    assert any("cannot rebuild the view" in w for w in cold["warnings"]), cold["warnings"]
    assert cold["got"] == cold["eager"], cold
