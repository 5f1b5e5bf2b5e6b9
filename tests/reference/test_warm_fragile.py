"""Each private PyTorch detail the cache rests on, broken on purpose: a right answer and at most one recompile.

Fresh processes (`tests/programs/stale_run.py`) on the parameter-free model of `test_warm_staleness`.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.reference.test_warm_staleness import PLAIN, cache_files, run

pytestmark = pytest.mark.slow


def job(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    (tmp_path / "model.py").write_text(PLAIN)
    return {"source": str(tmp_path / "model.py"), "calls": [{}], **extra}


@pytest.mark.parametrize("fault", ["traced_code", "cache_entries"])
def test_missing_private_attribute_at_compile_time_is_uncacheable(tmp_path: Path, fault: str) -> None:
    """A private API missing at compile time: the call succeeds, a warning says why nothing was saved."""
    report = run(job(tmp_path, **{"break": fault}), tmp_path)
    assert report["calls"] == [True] and not report["errors"], report
    assert report["unique_graphs"] == 1, report
    assert any("cached" in w and ("get_traced_code" in w or "_debug_get_cache_entry_list" in w)
               for w in report["warnings"]), report["warnings"]
    assert not cache_files(tmp_path / ".torchair_cache"), "nothing is saved"


def seam_cache_only() -> tuple[str, ...]:
    from torchair_ref import _torch

    return _torch.CACHE_ONLY


@pytest.mark.parametrize("accessor", seam_cache_only())
def test_seam_accessor_failing_at_compile_time_is_uncacheable(tmp_path: Path, accessor: str) -> None:
    """Each accessor of the seam that the cold trace reads only to decide what to save (`_torch.CACHE_ONLY`),
    failing as for a name this torch lacks: the call succeeds, a warning names it, nothing is saved."""
    report = run(job(tmp_path, **{"break": f"seam:{accessor}"}), tmp_path)
    assert report["calls"] == [True] and not report["errors"], report
    assert report["unique_graphs"] == 1, report
    assert any("cached" in w and accessor in w for w in report["warnings"]), report["warnings"]
    assert not cache_files(tmp_path / ".torchair_cache"), "nothing is saved"


@pytest.mark.parametrize(("accessor", "graphs"), [("tensor_guards", 0), ("global_state_guard", 1)])
def test_seam_accessor_failing_at_a_warm_start_never_fails_the_call(tmp_path: Path, accessor: str,
                                                                     graphs: int) -> None:
    """A warm-side accessor failing: the fast C++ input check degrades to the full one (no recompile); the C++
    ambient-state guard missing makes the cache fail to load, so it is rebuilt (one trace). The call is right."""
    base = job(tmp_path, calls=[{}, {}])
    run(base, tmp_path)
    assert cache_files(tmp_path / ".torchair_cache")
    warm = run({**base, "break": f"seam:{accessor}"}, tmp_path)
    assert warm["calls"] == [True, True] and not warm["errors"], warm
    assert warm["unique_graphs"] == graphs, warm
    if graphs:
        assert any("Discarding broken cache" in w and accessor in w for w in warm["warnings"]), warm["warnings"]
    else:
        assert not warm["warnings"], warm["warnings"]


def test_loader_failing_twice_the_same_way_is_not_rewritten(tmp_path: Path) -> None:
    """A warm loader that fails (a renamed private module): rebuilt once; the same failure again keeps the file."""
    base = job(tmp_path)
    run(base, tmp_path)
    (path,) = cache_files(tmp_path / ".torchair_cache")
    first = run({**base, "break": "loader"}, tmp_path)
    assert first["calls"] == [True] and first["unique_graphs"] == 1, first
    assert any("Discarding broken cache" in w and "renamed_eager" in w for w in first["warnings"]), first["warnings"]
    rewritten = path.read_bytes()
    second = run({**base, "break": "loader"}, tmp_path)
    assert second["calls"] == [True] and second["unique_graphs"] == 1, second
    assert any("fails to load the same way twice" in w for w in second["warnings"]), second["warnings"]
    assert path.read_bytes() == rewritten, "the file is not rewritten a second time"
    healed = run(base, tmp_path)
    assert healed["unique_graphs"] == 0 and healed["calls"] == [True] and not healed["warnings"], healed


@pytest.mark.inductor
def test_inductor_fragile_points(tmp_path: Path) -> None:
    """An unknown import line in Inductor's wrapper loads through Inductor's own loader (one INFO line, no
    recompile); unreadable kernel declarations at compile time still give a right answer warm."""
    from torchair_ref.inference import artifact

    base = job(tmp_path, run_eagerly=False)
    cold = run(base, tmp_path)
    assert cold["calls"] == [True], cold
    (path,) = cache_files(tmp_path / ".torchair_cache")
    payload = artifact.decode(path.read_bytes())
    source = payload["graph"]["source"]
    extra = "\nimport torch\nimport torch._inductor.config\n"
    payload["graph"]["source"] = source.replace("\nimport torch\n", extra, 1)
    assert payload["graph"]["source"] != source
    path.write_bytes(artifact.encode(payload))
    warm = run(base, tmp_path)
    assert warm["calls"] == [True] and warm["unique_graphs"] == 0 and not warm["warnings"], warm
    assert warm["stderr"].count("Inductor's own loader") == 1, warm["stderr"][-3000:]
    assert "import torch._inductor.config" in warm["stderr"]

    other = tmp_path / "declaration"
    other.mkdir()
    broken = job(other, run_eagerly=False, **{"break": "declaration"})
    first = run(broken, other)
    assert first["calls"] == [True] and not first["errors"], first
    warm = run({**broken, "break": None}, other)
    assert warm["calls"] == [True] and warm["unique_graphs"] <= 1, warm


def test_record_is_typed_and_versioned(tmp_path: Path) -> None:
    """The payload is a `CacheRecord` of the current schema; another schema is stale (removed, rebuilt)."""
    from torchair_ref.inference import artifact, record

    base = job(tmp_path)
    run(base, tmp_path)
    (path,) = cache_files(tmp_path / ".torchair_cache")
    payload = artifact.decode(path.read_bytes())
    loaded = record.CacheRecord.from_payload(payload)
    assert loaded.schema == record.SCHEMA_VERSION and loaded.function["qualname"] == "Plain.run"
    assert [s.qualname for s in loaded.traced_sources] == ["Plain.run"], loaded.traced_sources
    assert {"torch_git", "torchair_ref", "cpu_features"} <= loaded.environment.keys(), loaded.environment
    payload["schema"] = record.SCHEMA_VERSION - 1
    path.write_bytes(artifact.encode(payload))
    report = run(base, tmp_path)
    assert report["unique_graphs"] == 1 and report["calls"] == [True], report
    assert any("schema" in w for w in report["warnings"]), json.dumps(report["warnings"])


def test_torch_2_14_runtime_check_import_is_served_by_the_light_loader() -> None:
    """torch 2.14's wrappers import `assert_tensor_metadata`: the light loader serves it (no Inductor import, no
    18 s fallback to Inductor's own loader), with the same checks: dtype, then sizes and strides."""
    import torch

    from torchair_ref import _torch
    from torchair_ref.compilers import inductor

    wrapper = "import torch\nfrom torch._inductor.runtime.runtime_utils import assert_tensor_metadata\n"
    assert inductor.unknown_import(wrapper) is None
    check = inductor._tensor_metadata_check(_torch.assert_size_stride())
    t = torch.empty(2, 3)
    check(t, (2, 3), (3, 1), torch.float32, "aten.mm")
    check(None, (2, 3), (3, 1), torch.float32)
    with pytest.raises(RuntimeError, match="expected dtype torch.float16 but got torch.float32"):
        check(t, (2, 3), (3, 1), torch.float16, "aten.mm")
    with pytest.raises(AssertionError):
        check(t, (3, 2), (2, 1), torch.float32, "aten.mm")
