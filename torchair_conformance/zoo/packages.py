"""The zoo's third-party packages, `transformers` and `timm` (pyproject's `zoo` extra, pinned in
`constraints/zoo.txt`): whether they are here, and importing them so that they work beside either torch release.

`timm` imports `torchvision` at import time (`timm/layers/create_norm.py` and `norm_act.py`: `from
torchvision.ops.misc import FrozenBatchNorm2d`, a pure-Python class), and `transformers` imports it wherever it is
installed. PyPI's `torchvision` wheels are built against PyPI's CUDA torch: beside the CPU wheel of torch 2.13.0
their compiled operators cannot load (`_C.so` needs `libc10_cuda.so`), `torchvision.extension` notes that and goes
on, and then `torchvision/_meta_registrations.py` registers fake kernels for `torchvision::nms` and
`torchvision::qnms` without checking (`RuntimeError: operator torchvision::nms does not exist`), so the import
fails although nothing the zoo builds calls a torchvision operator. `load` handles exactly that case: it declares the
two operators' schemas (no kernel: calling them raises) and imports torchvision again; its pure-Python parts then
work. Beside torch 2.14.1 (a CUDA build) the compiled operators load and nothing is declared.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType

__all__ = ["REQUIRED", "EXTRA", "missing", "load", "versions"]

#: the distributions the zoo needs, by import name
REQUIRED = ("transformers", "timm", "torchvision")
#: how to install them
EXTRA = "pip install -c constraints/cpu.txt -c constraints/zoo.txt '.[zoo]' (or tox -e zoo)"

_MISSING_OPS = "operator torchvision::nms does not exist"
#: the schemas of torchvision's operators that its import registers fake kernels for without checking that they
#: exist (torchvision 0.28.0 `_meta_registrations.py:163,177`; the schemas as its `csrc/ops/nms.cpp` defines them)
_UNCHECKED_SCHEMAS = (
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
)
_declared: list = []  # the torch.library.Library that holds the declared schemas lives as long as the process


def missing() -> str | None:
    """Why the zoo cannot build its models here (None: it can); imports nothing."""
    absent = [name for name in REQUIRED if importlib.util.find_spec(name) is None]
    if absent:
        return f"the zoo's packages are not installed ({', '.join(absent)} missing): {EXTRA}"
    return None


def load() -> tuple[ModuleType, ModuleType]:
    """`transformers` and `timm`, imported (torchvision first, as the module docstring says)."""
    reason = missing()
    if reason is not None:
        raise ModuleNotFoundError(reason)
    _import_torchvision()
    return importlib.import_module("transformers"), importlib.import_module("timm")


def versions() -> dict[str, str]:
    """The versions of torch and of the zoo's packages in this process (after `load`)."""
    import torch

    found = {"torch": torch.__version__}
    for name in REQUIRED:
        module = sys.modules.get(name)
        found[name] = getattr(module, "__version__", "not imported") if module else "not imported"
    return found


def _import_torchvision() -> None:
    if "torchvision" in sys.modules and not _declared and hasattr(sys.modules["torchvision"], "__version__"):
        return
    try:
        importlib.import_module("torchvision")
    except RuntimeError as exc:
        if _MISSING_OPS not in str(exc) or _declared:
            raise
        for name in [n for n in sys.modules if n == "torchvision" or n.startswith("torchvision.")]:
            del sys.modules[name]
        import torch

        library = torch.library.Library("torchvision", "FRAGMENT")
        for schema in _UNCHECKED_SCHEMAS:
            library.define(schema)
        _declared.append(library)
        importlib.import_module("torchvision")
