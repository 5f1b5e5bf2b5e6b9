"""IMPL-4: make the extracted sources importable as ``torchair`` without touching ``sys.path``.

A meta-path finder answers for the top-level ``torchair`` package (its submodules are then found through the package's
``__path__`` by Python's own path finder) and for the native modules, which it serves from this adapter's stand-ins.
``torch_npu`` is found nowhere, as on a host without torch-npu (``importlib.util.find_spec`` gives None, which
libraries such as ``transformers`` ask before importing); where a torch-npu is installed all the same, the finder
refuses it (``ModuleNotFoundError`` naming this adapter), so the real torch-npu is never imported (IMPL-3) and
upstream takes its own no-torch-npu branches (``'torch_npu' not in sys.modules``: no NPU fusion patterns, no NPU
deterministic level, device from ``$ASCEND_DEVICE_ID``). No ``torch_npu`` stand-in is offered: with one in
``sys.modules`` upstream's max-autotune reaches for ``torch.ops.npu`` kernels (``patterns/*.py``).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Mapping, Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path

__all__ = ["NATIVE_STANDINS", "UpstreamFinder", "install"]

#: upstream's native module (linked against CANN) -> the stand-in module of this adapter that replaces it
NATIVE_STANDINS: Mapping[str, str] = {
    "torchair.core._torchair": "torchair_cpu.standins._torchair",
    "torchair.core._npu_graph_executor": "torchair_cpu.standins._npu_graph_executor",
    "torchair.core._npu_utils": "torchair_cpu.standins._npu_utils",
    "torchair.core._abi_compat_ge_apis": "torchair_cpu.standins._abi_compat_ge_apis",
}


class _AliasLoader(importlib.abc.Loader):
    """Loads a stand-in module under upstream's native module name."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: ModuleSpec):
        return importlib.import_module(self.target)

    def exec_module(self, module) -> None:
        """The stand-in is already executed by its own import."""


class UpstreamFinder(importlib.abc.MetaPathFinder):
    """Finds ``torchair`` in ``package_dir`` and upstream's native modules among the stand-ins."""

    def __init__(self, package_dir: Path) -> None:
        self.package_dir = Path(package_dir)

    def find_spec(self, fullname: str, path: Sequence[str] | None = None, target=None) -> ModuleSpec | None:
        if fullname in NATIVE_STANDINS:
            return ModuleSpec(fullname, _AliasLoader(NATIVE_STANDINS[fullname]))
        if fullname == "torch_npu" or fullname.startswith("torch_npu."):
            if importlib.machinery.PathFinder.find_spec("torch_npu") is None:
                return None  # as on a host without torch-npu: `importlib.util.find_spec` says None, import fails
            raise ModuleNotFoundError(
                f"{fullname} is not importable under torchair_cpu: upstream runs as on a host without torch-npu "
                "(IMPL-3); reduce-overhead and anything else that needs torch_npu needs an Ascend host", name=fullname)
        if fullname == "torchair":
            return importlib.util.spec_from_file_location(
                "torchair", self.package_dir / "__init__.py", submodule_search_locations=[str(self.package_dir)])
        return None


def install(package_dir: Path) -> UpstreamFinder:
    """Put a finder for ``package_dir`` (the extracted ``torchair/``) first on ``sys.meta_path``, once."""
    for finder in sys.meta_path:
        if isinstance(finder, UpstreamFinder):
            if finder.package_dir != Path(package_dir):
                raise ImportError(f"torchair is already served from {finder.package_dir}, not {package_dir}")
            return finder
    finder = UpstreamFinder(Path(package_dir))
    sys.meta_path.insert(0, finder)
    return finder
