"""torchair_ref: TorchAir's compile cache on stock PyTorch, the reference implementation (SPEC IMPL-1, IMPL-2).

Public surface: `CompilerConfig`, `get_npu_backend`, `dynamo_export`, `inference.cache_compile`,
`inference.readable_cache`, `logger`, and the `__conformance__` declaration the conformance suite reads.
The surface is resolved on first use, so `import torchair_ref.config` or `.inference.paths` stays pure Python.
"""
from __future__ import annotations

import logging
from typing import Any

from torchair_ref._lazy import surface
from torchair_ref._version import __version__

logger = logging.getLogger("torchair_ref")

#: public name -> module that defines it
_SURFACE = {
    "CompilerConfig": "torchair_ref.config",
    "get_npu_backend": "torchair_ref.backend",
    "dynamo_export": "torchair_ref.export",
    "inference": "torchair_ref.inference",
}
__all__ = [*_SURFACE, "logger", "__conformance__"]
_resolve, __dir__ = surface(__name__, _SURFACE, globals())


def __getattr__(name: str) -> Any:
    if name == "__conformance__":
        globals()[name] = _conformance()
        return globals()[name]
    return _resolve(name)


def _conformance() -> dict[str, Any]:
    """IMPL-2: what this implementation is and what it supports."""
    import torch

    from torchair_ref import export

    device = "cuda" if torch.cuda.is_available() else "cpu"
    # reduce-overhead runs on CPU too (its eager graph there), so it is declared on every device.
    capabilities = {"cache", "reduce-overhead", "ge_cache", "rng_rejection", "multi_rank_export", "float64"}
    declaration: dict[str, Any] = {
        "device": device,
        "versions": {"torch": torch.__version__, "torchair_ref": __version__, "cann": None},
        "capabilities": capabilities,
        # The eager graph compiler caches like the default one and compiles in a fraction of the time.
        "fast_cache_config": lambda: [("debug.run_eagerly", True)],
    }
    threshold = getattr(export, "externalize_threshold", None)
    if threshold is not None:
        capabilities.add("threshold_override")
        declaration["set_externalize_threshold"] = threshold
    return declaration
