"""IMPL-4: upstream TorchAir on an Ascend NPU, as the conformance suite sees it (``--impl torchair_npu``).

Importing this package imports nothing heavy; the first use of the IMPL-1 surface (``CompilerConfig``,
``get_npu_backend``, ``dynamo_export``, ``inference``, ``logger``) or of ``__conformance__`` runs ``import torch_npu``
and then ``import torchair`` (IMPL-3), and re-exports upstream's own objects.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from torchair_npu.hooks import lazy_surface

__all__ = ["CompilerConfig", "get_npu_backend", "dynamo_export", "inference", "logger", "__conformance__"]


def upstream() -> ModuleType:
    """IMPL-3: ``import torch_npu``, then upstream's ``torchair``."""
    importlib.import_module("torch_npu")
    return importlib.import_module("torchair")


def _conformance() -> dict[str, Any]:
    """IMPL-2: device npu, versions of torch, torch_npu and CANN, what the NPU runs, the threshold hook."""
    from torchair_npu.hooks import DIVERGENCES, threshold_hook
    from torchair_npu.versions import declared_versions

    torchair = upstream()
    torch_npu = importlib.import_module("torch_npu")
    # Multi-rank exports are gloo worlds of export processes: they trace, convert and write, and run nothing on the NPU.
    capabilities = {"cache", "reduce-overhead", "ge_cache", "rng_rejection", "threshold_override", "multi_rank_export"}
    return {
        "device": "npu",
        "versions": declared_versions(importlib.import_module("torch"), torch_npu),
        "capabilities": capabilities,
        "divergences": DIVERGENCES,
        # GE compiles and caches in max-autotune: the true default config is the fast way to a cache on an NPU.
        "fast_cache_config": lambda: [],
        "set_externalize_threshold": threshold_hook(torchair),
    }


__getattr__ = lazy_surface(__name__, globals(), upstream, _conformance)
