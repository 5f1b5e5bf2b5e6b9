"""Cold then warm start in fresh processes (CC-7, CC-8, CC-11, CC-14, CC-15, CC-17, CC-18, CC-20)."""
from __future__ import annotations

import os
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


@pytest.mark.parametrize(
    "damage",
    ["truncate", "flip_byte", "empty", "mode_0644", "foreign", "old_version", "other_torch"],
)
def test_broken_cache_is_rebuilt(tmp_path: Path, cache_program, damage: str) -> None:
    """CC-17: a damaged, foreign, stale or unsafe file is removed with a warning and compiled afresh."""
    job = {"model": "seed"}
    cold = cache_program(job, tmp_path)
    (path,) = cache_files(tmp_path / ".torchair_cache")
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "flip_byte":
        path.write_bytes(data[:-10] + bytes([data[-10] ^ 0x40]) + data[-9:])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "mode_0644":
        path.chmod(0o644)
    elif damage == "foreign":
        path.write_bytes(b"\x80\x04\x95 not ours at all")
    elif damage == "old_version":
        path.write_bytes(data.replace(b'"format": 1', b'"format": 0', 1))
    elif damage == "other_torch":
        import torch

        path.write_bytes(_reseal(data, torch.__version__, "1.0.0"))
    again = cache_program(job, tmp_path)
    assert again["unique_graphs"] == 1, again
    assert again["outputs"] == cold["outputs"], (again["outputs"], cold["outputs"])
    assert any("Discarding" in w for w in again["warnings"]), again["warnings"]
    (rebuilt,) = cache_files(tmp_path / ".torchair_cache")
    assert stat.S_IMODE(rebuilt.stat().st_mode) == 0o600
    third = cache_program(job, tmp_path)
    assert third["unique_graphs"] == 0 and not third["warnings"], third


def _reseal(data: bytes, old: str, new: str) -> bytes:
    """Rewrite the payload with another torch version and a matching checksum (a valid file from elsewhere)."""
    import json

    from torchair_ref.inference import artifact

    payload = artifact.decode(data)
    assert payload["environment"]["torch"] == old
    payload["environment"]["torch"] = new
    return artifact.encode(payload)


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


def test_concurrent_cold_compiles_leave_one_valid_file(tmp_path: Path) -> None:
    """CC-11: two processes compiling the same path at once both succeed and leave one valid file."""
    import json

    from tests.conftest import program_report, start_program

    started = [start_program("cache_run", {"model": "seed"}, tmp_path / f"job{i}", tmp_path) for i in range(2)]
    outputs = {json.dumps(program_report(s)["outputs"]) for s in started}
    assert len(outputs) == 1, outputs
    files = cache_files(tmp_path / ".torchair_cache")
    assert len(files) == 1, files
    assert not [p for p in files[0].parent.iterdir() if p.name.endswith(".tmp")], list(files[0].parent.iterdir())
    from torchair_ref.inference import artifact

    artifact.read(str(files[0]))
