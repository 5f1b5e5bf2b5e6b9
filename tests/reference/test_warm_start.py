"""The reference's cold then warm start in fresh processes on its own test programs (CC-7, CC-8, CC-14, CC-15, CC-18,
CC-20, Inductor kernels kept); broken caches and concurrent cold compiles are torchair_conformance/test_broken_cache.py
and
torchair_conformance/test_reliability.py, with the reference's damage catalogue in
tests/reliability/test_reliability_damage.py."""
from __future__ import annotations

import stat
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def cache_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("compiled_module"))


def test_seed_example_cold_then_warm(tmp_path: Path, cache_program) -> None:
    """CC-7, CC-8, CC-11, CC-14, CC-20: the seed writes prompt/decode files; a second process loads both untraced."""
    job = {"model": "seed", "calls": [{"method": "prompt"}, {"method": "decode"}]}
    cold = cache_program(job, tmp_path)
    files = cache_files(tmp_path / ".torchair_cache")
    names = [(f.parent.parent.name.split("_")[:2], f.parent.name) for f in files]
    assert names == [(["Model", "dynamic"], "decode"), (["Model", "dynamic"], "prompt")] or all(
        n[1] in ("decode", "prompt") for n in names
    ), names
    assert [f.parent.name for f in files] == ["decode", "prompt"], files
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files), [oct(f.stat().st_mode) for f in files]
    assert cold["unique_graphs"] == 2, cold
    assert "saved to" in cold["stderr"], cold["stderr"]

    warm = cache_program(job, tmp_path)
    assert warm["unique_graphs"] == 0 and warm["frames_total"] == 0, warm
    assert warm["outputs"] == cold["outputs"], (warm["outputs"], cold["outputs"])
    assert warm["imported"] == {"torch._dynamo": False, "torch._inductor": False, "sympy": False}, warm["imported"]
    assert warm["stderr"].count("loaded from") == 2, warm["stderr"]
    assert not warm["warnings"], warm["warnings"]


def test_seed_example_class_name_in_path(tmp_path: Path, cache_program) -> None:
    """CC-8: <root>/<Class>_dynamic_<md5>/<func>/compiled_module under the cwd's .torchair_cache."""
    cache_program({"model": "seed"}, tmp_path)
    (model_dir,) = (tmp_path / ".torchair_cache").iterdir()
    cls, kind, md5 = model_dir.name.split("_")
    assert (cls, kind, len(md5)) == ("SeedModel", "dynamic", 32), model_dir.name
    assert int(md5, 16) >= 0


def test_warm_start_below_a_rank_level(tmp_path: Path, cache_program) -> None:
    """CC-8, CC-14: with a <dist> level between <model_info> and <func>, the warm start still loads the file that
    was written for this <model_info> (no trace, no stale-cache warning)."""
    job = {"model": "mlp", "tp_rank": 5, "pp_rank": 1, "calls": [{"method": "run", "batch": 2, "steps": 3}]}
    cold = cache_program(job, tmp_path)
    (cache,) = cache_files(tmp_path / ".torchair_cache")
    assert cache.parent.parent.name == "tp_rank5_pp_rank1", cache
    warm = cache_program(job, tmp_path)
    assert warm["unique_graphs"] == 0 and not warm["warnings"], warm
    assert warm["outputs"] == cold["outputs"], (warm["outputs"], cold["outputs"])


@pytest.mark.parametrize("dynamic", [True, False])
def test_closure_tensor_is_rebound(tmp_path: Path, cache_program, dynamic: bool) -> None:
    """CC-18: a tensor the method reads from its closure comes from the live process on a warm start."""
    job = {"model": "closure", "dynamic": dynamic, "calls": [{"method": "run", "batch": 2, "steps": 3}]}
    cold = cache_program(job, tmp_path)
    warm = cache_program(job, tmp_path)
    assert warm["unique_graphs"] == 0 and not warm["warnings"], warm
    assert warm["outputs"] == cold["outputs"], (warm["outputs"], cold["outputs"])


@pytest.mark.parametrize("dynamic", [True, False])
def test_mlp_inputs_outputs_and_rebinding(tmp_path: Path, cache_program, dynamic: bool) -> None:
    """CC-14, CC-18: kw-only ints, tuple outputs holding shapes and ints, plain tensor attributes and globals."""
    job = {"model": "mlp", "dynamic": dynamic, "calls": [{"method": "run", "batch": 3, "steps": 4}]}
    cold = cache_program(job, tmp_path)
    warm = cache_program(job, tmp_path)
    assert warm["unique_graphs"] == 0, warm
    assert warm["outputs"] == cold["outputs"], (warm["outputs"], cold["outputs"])
    _, (shape, steps) = warm["outputs"][0]
    assert (shape, steps) == ([3, 16], 4), warm["outputs"][0]


def test_warm_dynamic_batch_follows_the_input(tmp_path: Path, cache_program) -> None:
    """CC-14, CC-18: a dynamic graph loaded warm serves another batch size, and shapes in outputs follow it."""
    cache_program({"model": "mlp", "calls": [{"method": "run", "batch": 3}]}, tmp_path)
    cold_other = cache_program({"model": "mlp", "calls": [{"method": "run", "batch": 5}]}, tmp_path / "..")
    warm = cache_program({"model": "mlp", "calls": [{"method": "run", "batch": 5}]}, tmp_path)
    assert warm["unique_graphs"] == 0, warm
    assert warm["outputs"][0][1][0] == [5, 16], warm["outputs"]
    assert warm["outputs"][0][0]["sha256"] == cold_other["outputs"][0][0]["sha256"]


def test_warm_static_graph_rejects_other_sizes(tmp_path: Path, cache_program) -> None:
    """CC-15: a static cache called warm with another size raises AssertionError naming size and stride."""
    cache_program({"model": "mlp", "dynamic": False, "calls": [{"method": "run", "batch": 3}]}, tmp_path)
    with pytest.raises(AssertionError) as caught:
        cache_program({"model": "mlp", "dynamic": False, "calls": [{"method": "run", "batch": 4}]}, tmp_path)
    assert "expected size 4==3, stride 16==16 at dim=0" in str(caught.value), str(caught.value)[-2000:]


@pytest.mark.inductor
def test_inductor_cold_then_warm_with_kept_kernels(tmp_path: Path, cache_program) -> None:
    """CC-9, CC-14: Inductor graphs load warm without Dynamo or Inductor; ge_cache keeps kernels in <func>/."""
    job = {"model": "mlp", "run_eagerly": False, "ge_cache": True, "calls": [{"method": "run", "batch": 3}]}
    cold = cache_program(job, tmp_path)
    (path,) = cache_files(tmp_path / ".torchair_cache")
    assert "_gecache_" in path.parent.parent.name, path
    kernels = list((path.parent / "kernels").iterdir())
    assert kernels and all(k.suffix == ".so" for k in kernels), kernels
    warm = cache_program(job, tmp_path, env={"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "empty_inductor_cache")})
    assert warm["unique_graphs"] == 0, warm
    assert warm["imported"]["torch._inductor"] is False, warm["imported"]
    assert warm["outputs"] == cold["outputs"], (warm["outputs"], cold["outputs"])
