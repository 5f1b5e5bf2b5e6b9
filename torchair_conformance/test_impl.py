"""SPEC section 0: the implementation under test (IMPL-1..IMPL-4)."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
import torch

from torchair_conformance.impl import ENV_VAR

_SUITE_DIR = Path(__file__).resolve().parent


@pytest.mark.clause("IMPL-1")
def test_surface_is_present(impl):
    missing = [name for name in ("CompilerConfig", "get_npu_backend", "dynamo_export", "logger")
               if not hasattr(impl.module, name)]
    missing += [f"inference.{n}" for n in ("cache_compile", "readable_cache") if not hasattr(impl.module.inference, n)]
    assert not missing, f"{impl.name} lacks {missing}"
    assert isinstance(impl.logger, logging.Logger), f"{impl.name}.logger is {type(impl.logger)!r}, not a logging.Logger"
    for name in ("get_npu_backend", "dynamo_export", "cache_compile", "readable_cache"):
        assert callable(getattr(impl, name)), f"{impl.name}: {name} is not callable"


@pytest.mark.clause("IMPL-2")
def test_conformance_declaration_is_well_formed(impl):
    declared = getattr(impl.module, "__conformance__", None)
    if declared is None:
        pytest.skip(f"{impl.name} declares no __conformance__ (it is optional)")
    assert isinstance(declared, Mapping), f"__conformance__ must be a mapping, got {type(declared)!r}"
    assert declared.get("device") in ("cpu", "cuda", "npu"), f"device {declared.get('device')!r}"
    versions = declared.get("versions")
    assert isinstance(versions, Mapping) and "torch" in versions, f"versions must name torch: {versions!r}"
    caps = declared.get("capabilities", ())
    assert all(isinstance(c, str) for c in caps), f"capabilities must be strings: {caps!r}"


@pytest.mark.clause("IMPL-1", "IMPL-2")
@pytest.mark.parametrize("how", ["option", "env"])
def test_unknown_implementation_is_a_usage_error(how, tmp_path):
    name = "no_such_torchair_implementation_xyz"
    args = [sys.executable, "-m", "pytest", str(_SUITE_DIR / "test_impl.py"), "-q", "-p", "no:cacheprovider",
            "-k", "test_surface_is_present"]
    env = {k: v for k, v in __import__("os").environ.items() if k != ENV_VAR}
    if how == "option":
        args += ["--impl", name]
    else:
        env[ENV_VAR] = name
    proc = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR, (
        f"expected exit {int(pytest.ExitCode.USAGE_ERROR)} (usage error) for --impl {name}, "
        f"got {proc.returncode}:\n{out[-3000:]}")
    assert name in out, f"the usage error must name the module {name!r}:\n{out[-3000:]}"


@pytest.mark.clause("IMPL-3")
def test_torch_npu_is_imported_only_for_upstream(impl):
    imported = "torch_npu" in sys.modules
    if impl.name.split(".")[0] == "torchair":
        assert imported, "--impl torchair must import torch_npu first (IMPL-3)"
    else:
        assert not imported, f"torch_npu was imported while testing {impl.name} (IMPL-3: never in a CPU environment)"


def _device_present(device: str) -> bool:
    if device == "cpu":
        return True
    backend = getattr(torch, device, None)
    return bool(backend is not None and backend.is_available() and backend.device_count() > 0)


@pytest.mark.clause("IMPL-2", "IMPL-4")
def test_declaration_is_true_of_this_environment(impl):
    """What an implementation (or an adapter of upstream) declares holds here: its device is present, the torch it
    names is the torch that runs, and the torch_npu it names is a version string, never invented."""
    declared = getattr(impl.module, "__conformance__", None)
    if declared is None:
        pytest.skip(f"{impl.name} declares no __conformance__ (it is optional)")
    assert _device_present(impl.device), f"{impl.name} declares device {impl.device!r}, which this process lacks"
    assert impl.versions.get("torch") == torch.__version__, (
        f"{impl.name} declares torch {impl.versions.get('torch')!r}, the process runs {torch.__version__!r}")
    torch_npu = impl.versions.get("torch_npu")
    assert torch_npu is None or (isinstance(torch_npu, str) and torch_npu[:1].isdigit()), (
        f"{impl.name} declares torch_npu {torch_npu!r}: expected a version string or null")
