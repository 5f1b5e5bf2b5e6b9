"""torchair_ref: TorchAir's compile cache on stock PyTorch, the reference implementation (SPEC IMPL-1, IMPL-2).

Public surface: `CompilerConfig`, `get_npu_backend`, `dynamo_export`, `inference.cache_compile`,
`inference.readable_cache`, `logger`, and the `__conformance__` declaration the conformance suite reads.
The surface is resolved on first use, so `import torchair_ref.config` or `.inference.paths` stays pure Python.
"""
from __future__ import annotations

import importlib
import logging
from typing import Any

__version__ = "0.1.0"
logger = logging.getLogger("torchair_ref")

#: public name -> (module, attribute or None for the module itself)
_SURFACE = {
    "CompilerConfig": ("torchair_ref.config", "CompilerConfig"),
    "get_npu_backend": ("torchair_ref.backend", "get_npu_backend"),
    "dynamo_export": ("torchair_ref.export", "dynamo_export"),
    "inference": ("torchair_ref.inference", None),
}
__all__ = [*_SURFACE, "logger", "__conformance__"]


def __getattr__(name: str) -> Any:
    if name == "__conformance__":
        value = _conformance()
    elif name in _SURFACE:
        module_name, attribute = _SURFACE[name]
        module = importlib.import_module(module_name)
        value = module if attribute is None else getattr(module, attribute)
    else:
        raise AttributeError(f"module 'torchair_ref' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def _conformance() -> dict:
    """IMPL-2: what this implementation is and what it supports."""
    import torch

    from torchair_ref import export

    device = "cuda" if torch.cuda.is_available() else "cpu"
    capabilities = {"ge_cache", "multi_rank_export"}
    if device == "cuda":
        capabilities.add("reduce-overhead")
    declaration: dict[str, Any] = {
        "device": device,
        "versions": {"torch": torch.__version__, "torchair_ref": __version__, "cann": None},
        "capabilities": capabilities,
    }
    threshold = getattr(export, "externalize_threshold", None)
    if threshold is not None:
        capabilities.add("threshold_override")
        declaration["set_externalize_threshold"] = threshold
    return declaration
