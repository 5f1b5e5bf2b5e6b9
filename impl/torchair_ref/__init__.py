"""torchair_ref: TorchAir's compile cache on stock PyTorch, the reference implementation (SPEC IMPL-1, IMPL-2).

Public surface: `CompilerConfig`, `get_npu_backend`, `dynamo_export`, `inference.cache_compile`,
`inference.readable_cache`, `logger`, and the `__conformance__` declaration the conformance suite reads.
"""
from __future__ import annotations

import logging

import torch

from torchair_ref import inference
from torchair_ref.backend import get_npu_backend
from torchair_ref.config import CompilerConfig
from torchair_ref.export import dynamo_export

__version__ = "0.1.0"
logger = logging.getLogger("torchair_ref")


def _conformance() -> dict:
    """IMPL-2: what this implementation is and what it supports."""
    from torchair_ref import export

    device = "cuda" if torch.cuda.is_available() else "cpu"
    capabilities = {"ge_cache", "multi_rank_export"}
    if device == "cuda":
        capabilities.add("reduce-overhead")
    declaration = {
        "device": device,
        "versions": {"torch": torch.__version__, "torchair_ref": __version__, "cann": None},
        "capabilities": capabilities,
    }
    threshold = getattr(export, "externalize_threshold", None)
    if threshold is not None:
        declaration["capabilities"].add("threshold_override")
        declaration["set_externalize_threshold"] = threshold
    return declaration


__conformance__ = _conformance()
__all__ = ["CompilerConfig", "get_npu_backend", "dynamo_export", "inference", "logger", "__conformance__"]
