"""CC-23: a cache keeps the variants processes needed; CC-17: a rebuilt file is saved with `ge_cache=True` too.

Fresh processes (`tests/programs/variant_run.py`) with other thread counts (part of Dynamo's GLOBAL_STATE guard) on
one folder, with Inductor; the rules on payloads (`torchair_ref.inference.variants`) on their own.
"""
from __future__ import annotations

import glob
import os
from pathlib import Path

import pytest

from tests.conftest import run_program
from torchair_ref.errors import BrokenCacheError
from torchair_ref.inference import artifact, readable_cache, variants


def test_processes_with_two_thread_counts_each_warm_start_from_one_folder(tmp_path: Path) -> None:
    """Threads 2, 1, 2, 1 with `ge_cache=True`: the second process adds a variant (its warning names num_threads
    with both values), the third and fourth trace nothing; one file holds both variants, `readable_cache` shows them,
    and the kernels of both stay beside it."""
    job = {"cache_dir": str(tmp_path / "cache"), "ge_cache": True, "inductor": True}
    runs = [run_program("variant_run", {**job, "threads": threads}, tmp_path) for threads in (2, 1, 2, 1)]
    assert all(run["equal"] for run in runs), runs
    assert [run["unique_graphs"] for run in runs] == [1, 1, 0, 0], runs
    added = [w for w in runs[1]["warnings"] if "adding a variant" in w]
    assert len(added) == 1 and "num_threads 2 (cached) != 1 (now)" in added[0], runs[1]["warnings"]
    assert not runs[2]["warnings"] and not runs[3]["warnings"], runs
    (path,) = glob.glob(str(tmp_path / "cache" / "*" / "run" / "compiled_module"))
    text = readable_cache(path, print_output=False)
    assert "variant 1 of 2" in text and "variant 2 of 2" in text and '"num_threads":1' in text, text[:2000]
    assert text.count("(their per-call check is stored compiled: source sha256 ") == 2, text[:2000]
    kernels = os.listdir(os.path.join(os.path.dirname(path), "kernels"))
    assert kernels, "ge_cache=True keeps the kernels of the variants"


def test_a_variant_whose_guards_fail_is_not_loaded(tmp_path: Path) -> None:
    """A file of two variants (threads 2, then 1): a process with 1 thread checks the first variant's guards, which
    fail on GLOBAL_STATE, and loads only the graph of the second; each process with 2 threads loads the first."""
    job = {"cache_dir": str(tmp_path / "cache")}
    runs = [run_program("variant_run", {**job, "threads": threads}, tmp_path) for threads in (2, 1, 1, 2)]
    assert all(run["equal"] for run in runs), runs
    assert [run["unique_graphs"] for run in runs] == [1, 1, 0, 0], runs
    assert [run["graph_loads"] for run in runs[2:]] == [1, 1], runs


def test_a_warm_start_runs_the_check_the_cold_process_compiled(tmp_path: Path) -> None:
    """CC-14: the cold process stores its per-call check compiled; a warm process, with another hash seed, finds the
    same outline and loads that code without writing its source or compiling it (the source, its reads of every
    guard source and its compile were over half of a transformers model's guard work)."""
    job = {"cache_dir": str(tmp_path / "cache")}
    cold = run_program("variant_run", job, tmp_path, env={"PYTHONHASHSEED": "1"})
    warm = run_program("variant_run", job, tmp_path, env={"PYTHONHASHSEED": "2"})
    assert cold["unique_graphs"] == 1 and warm["unique_graphs"] == 0, (cold, warm)
    assert warm["equal"] and not warm["warnings"] and warm["check_compiles"] == 0, warm
    assert cold["check_source_reads"] > 0 and warm["check_source_reads"] == 0, (cold, warm)
    (path,) = glob.glob(str(tmp_path / "cache" / "*" / "run" / "compiled_module"))
    assert set(variants.split(artifact.read(path))[0]["guard_code"]) == {"sha256", "outline", "code", "replay", "first"}
    assert warm["replayed"] and not cold["replayed"], (cold, warm)


def test_a_first_warm_call_with_a_wrong_argument_raises_and_leaves_the_file(tmp_path: Path) -> None:
    """The first warm call passes an argument the method does not take: the caller gets Python's `TypeError`, as
    from the method itself; the file is neither discarded nor rewritten, and the next call warm-starts from it."""
    job = {"cache_dir": str(tmp_path / "cache")}
    cold = run_program("variant_run", job, tmp_path)
    (path,) = glob.glob(str(tmp_path / "cache" / "*" / "run" / "compiled_module"))
    written = os.stat(path).st_mtime_ns
    warm = run_program("variant_run", {**job, "inputs": ["extra", "plain"]}, tmp_path)
    assert cold["unique_graphs"] == 1 and warm["unique_graphs"] == 0, (cold, warm)
    assert len(warm["errors"]) == 1 and warm["errors"][0].startswith("TypeError"), warm
    assert warm["equal"] and warm["graph_loads"] == 1 and not warm["warnings"], warm
    assert os.stat(path).st_mtime_ns == written


def test_a_file_of_one_record_is_one_variant() -> None:
    """Files written before variants (one record as the payload) read as one variant; a single-variant save
    writes that same form, so older readers load it."""
    record = {"name": "M.run(self, x)", "graph": {}}
    assert variants.split(record) == [record]


def test_the_oldest_variant_goes_past_the_limit() -> None:
    kept = [{"n": i} for i in range(variants.LIMIT)]
    joined = variants.joined(kept, {"n": "new"})
    assert len(joined["variants"]) == variants.LIMIT
    assert joined["variants"][0] == {"n": 1} and joined["variants"][-1] == {"n": "new"}


@pytest.mark.parametrize("listed", [[], "x", [1], [{}] * (variants.LIMIT + 1)])
def test_malformed_variants_are_a_broken_cache(listed: object) -> None:
    with pytest.raises(BrokenCacheError):
        variants.split({"variants": listed})


def test_kernel_files_are_the_names_a_graph_record_holds() -> None:
    name = "a" * 40 + ".so"
    graph = {"kernels": [{"file": name, "so_path": "/tmp/x.so"}, {"so_path": "/tmp/y.so"}], "source": "b" * 40}
    assert variants.kernel_files({"graph": graph}) == {name}


def test_a_global_state_failure_names_each_differing_key_with_both_values() -> None:
    spec = {"check": "global_state", "guard": "GLOBAL_STATE", "text": "cut",
            "state": '{"num_threads": 2, "grad_mode": false, "default_dtype": 6}'}
    found = variants.differing_fields(spec, '{"num_threads": 1, "grad_mode": true, "default_dtype": 6}')
    assert found == "Dynamo's guard GLOBAL_STATE fails: num_threads 2 (cached) != 1 (now)"
    other = {"check": "equals", "guard": "EQUALS_MATCH", "text": "L['self'].k == 3"}
    assert variants.differing_fields(other) == "Dynamo's guard EQUALS_MATCH fails: L['self'].k == 3"


@pytest.mark.xfail(strict=True, reason="not built yet (CC-23): with dynamic=False a first warm call with another "
                   "static shape raises CC-15's AssertionError instead of adding a variant")
def test_processes_with_three_static_shapes_each_warm_start_from_one_folder(tmp_path: Path) -> None:
    """`dynamic=False`, processes starting with batch 2, 3 and 4, then each again: once each shape has run, each
    warm-starts (no trace) from the one file, which holds three variants, and equals eager."""
    job = {"cache_dir": str(tmp_path / "cache"), "dynamic": False}
    runs = [run_program("variant_run", {**job, "batch": batch}, tmp_path) for batch in (2, 3, 4, 2, 3, 4)]
    assert all(run["equal"] and not run["errors"] for run in runs), runs
    assert [run["unique_graphs"] for run in runs] == [1, 1, 1, 0, 0, 0], runs
    (path,) = glob.glob(str(tmp_path / "cache" / "*" / "run" / "compiled_module"))
    assert "variant 3 of 3" in readable_cache(path, print_output=False)


def test_a_tensor_subclass_where_a_plain_tensor_was_traced_is_never_served_the_plain_graph(tmp_path: Path) -> None:
    """CC-21: a warm process calls with a `__torch_function__` subclass (first call, and after a plain call) where
    the cold process traced a plain tensor: the cached graph is not run for it (today: the plain graph's values,
    not eager's); it is traced afresh, which for this subclass raises as `torch.compile` does, and plain calls
    stay served from the file."""
    job = {"cache_dir": str(tmp_path / "cache")}
    cold = run_program("variant_run", job, tmp_path)
    assert cold["equal"] and cold["unique_graphs"] == 1, cold
    for calls in (["sub", "plain"], ["plain", "sub"]):
        warm = run_program("variant_run", {**job, "inputs": calls}, tmp_path)
        assert warm["equal"], f"CC-21: {calls}: a call computed other values than eager: {warm}"
        assert len(warm["errors"]) == 1 and warm["errors"][0].startswith("TypeError"), warm
