"""The environment key of every benchmark record (SPEC BE-3).

implementation and version, torch, torch_npu, CANN (null off-NPU), device and SoC, Python, host, CPU threads, and on
an NPU what the host tells about itself (`machine`: `npu-smi info`, driver and firmware versions; not part of a
series' key); the
date and this project's commit are added per run by the harness. The CANN version is read from the toolkit's
install info under `$ASCEND_HOME_PATH` without importing `torch_npu` (which fails to import without CANN), and
through `torch_npu` when the run already imported it.
"""
from __future__ import annotations

import importlib.metadata
import os
import platform
import re
import socket
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from torchair_conformance.report.cann import from_install_info as cann_from_install_info


def cann_from_torch_npu(torch_npu: ModuleType) -> str | None:
    """BE-3: the CANN version as an imported `torch_npu` reports it, or None."""
    npu = getattr(torch_npu, "npu", None)
    getter = getattr(npu, "get_cann_version", None)
    if callable(getter):
        try:
            return str(getter())
        except Exception:  # noqa: BLE001 - an older torch_npu without the CANN query: try the next source
            pass
    version = getattr(getattr(torch_npu, "version", None), "cann", None)
    return str(version) if version else None


def distribution_version(name: str) -> str | None:
    """An installed distribution's version, read from its metadata (never by importing it)."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def soc_name(device: str) -> str:
    """BE-3: the accelerator's name (NPU SoC, CUDA device), else the CPU model."""
    if device == "npu":
        torch_npu = sys.modules.get("torch_npu")
        if torch_npu is not None:
            return str(torch_npu.npu.get_device_name(0))
    if device == "cuda":
        import torch

        return torch.cuda.get_device_name(0)
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


#: where an Ascend host keeps its driver's and firmware's version files
_ASCEND_VERSION_FILES = {"driver": "/usr/local/Ascend/driver/version.info",
                         "firmware": "/usr/local/Ascend/firmware/version.info"}


def version_file(path: str) -> str | None:
    """The `Version=` value of an Ascend `version.info` file, or None."""
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip().lower() == "version" and value.strip():
            return value.strip()
    return None


def npu_smi_summary(output: str) -> str | None:
    """The lines of `npu-smi info` that name the tool's version and the NPUs (the table rows with a chip name)."""
    keep = [" ".join(line.strip("|+= ").split()) for line in output.splitlines()
            if "npu-smi" in line.lower() or re.search(r"\b(910|310)\w*", line)]
    return "; ".join(k for k in keep if k)[:500] or None


def machine_info() -> dict[str, str | None]:
    """BE-3: what an NPU host tells about itself: `npu-smi info` (summary), driver and firmware versions."""
    try:
        done = subprocess.run(["npu-smi", "info"], capture_output=True, text=True, timeout=30)
        smi = npu_smi_summary(done.stdout) if done.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired):
        smi = None
    return {"npu-smi": smi, **{name: version_file(path) for name, path in _ASCEND_VERSION_FILES.items()}}


def collect(impl_name: str | None, impl: ModuleType | None, device: str) -> dict[str, Any]:
    """BE-3: the environment key, read in a worker after its timings (so it costs the measurement nothing).

    CANN is null off-NPU even where a toolkit is installed: such a run's history is grouped by device.
    """
    import torch

    declared = getattr(impl, "__conformance__", None) or {}
    versions = dict(declared.get("versions") or {}) if isinstance(declared, Mapping) else {}
    impl_version = versions.get(impl_name) if impl_name else None
    if impl is not None and impl_version is None:
        impl_version = getattr(impl, "__version__", None)
    torch_npu = sys.modules.get("torch_npu")
    cann = cann_from_torch_npu(torch_npu) if torch_npu is not None else None
    variant = os.environ.get("TORCHAIR_LEG_VARIANT")  # the nightly leg's image variant, where two share a CANN
    return {
        **({"variant": variant} if variant else {}),
        "impl": impl_name,
        "impl_version": impl_version,
        "torch": torch.__version__,
        "torch_npu": getattr(torch_npu, "__version__", None) or distribution_version("torch-npu"),
        "cann": (cann or cann_from_install_info()) if device == "npu" else None,
        "device": device,
        "soc": soc_name(device),
        "python": platform.python_version(),
        "host": socket.gethostname(),
        "threads": torch.get_num_threads(),
        "machine": machine_info() if device == "npu" else None,
    }


def project_commit(root: Path | None = None) -> str | None:
    """BE-3: this project's commit (`+dirty` when the work tree has changes), or None outside a git checkout.

    Changes under `reports/` are published results, not the code measured: `bench --publish` appends to
    `reports/history/` itself, so a second benchmark from a clean tree must not count as dirty."""
    root = root or Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                ":(exclude)reports"], cwd=root, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
