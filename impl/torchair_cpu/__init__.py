"""IMPL-4: upstream TorchAir's own Python, from the torch-npu wheel, run on CPU (``--impl torchair_cpu``).

At first use of the IMPL-1 surface or of ``__conformance__`` the wheel of ``$TORCH_NPU_VERSION`` (default 2.14.0) is
fetched with ``pip download --no-deps`` and its TorchAir sources extracted into a cache outside the repository
(``torchair_cpu.wheel``); a meta-path finder makes them importable as ``torchair`` with stand-ins for the four native
modules (``torchair_cpu.finder``, ``torchair_cpu.standins``). ``torch_npu`` itself is never imported (IMPL-3).

What runs on CPU (torchair_conformance/README.md has the table): configs and backends, ``cache_compile`` end to end in
max-autotune (Dynamo, upstream's FX->GE conversion, codegen, the cache file, fresh-process warm starts,
``readable_cache``), because the native graph handle ``TorchNpuGraphBase`` is backed by the project's GE executor
(``ge_executor``: each GE op computed with torch to CANN's semantics; an op or dtype it does not know fails naming
it), and ``dynamo_export`` (the ``.air`` is upstream's own graph). Results are labelled "upstream Python, graphs
executed by the project's GE executor". reduce-overhead (NPU graph capture, imports torch_npu) is not declared; the
other native parts raise "needs CANN/GE" where reached.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from torchair_npu.hooks import lazy_surface

#: how results against this adapter are labelled (IMPL-4): what ran is upstream's code, but not GE itself
LABEL = "upstream Python, graphs executed by the project's GE executor"

__all__ = ["CompilerConfig", "get_npu_backend", "dynamo_export", "inference", "logger", "__conformance__"]


def upstream() -> ModuleType:
    """IMPL-4: upstream's ``torchair``, from the wheel's extracted sources with the native modules stood in for."""
    from torchair_cpu import finder, wheel

    finder.install(wheel.ensure() / "torchair")
    return importlib.import_module("torchair")


def _conformance() -> dict[str, Any]:
    """IMPL-2: device cpu; torch, the wheel's torch_npu version and CANN (the wheel names none: null); only what runs
    on CPU."""
    import torch

    from torchair_cpu import wheel
    from torchair_npu.hooks import DIVERGENCES, threshold_hook

    torchair = upstream()
    return {
        "device": "cpu",
        "versions": {"torch": torch.__version__, "torch_npu": wheel.wheel_version(wheel.ensure()), "cann": None},
        # GE graphs run on the project's executor, so max-autotune caches, warm-starts and rejects RNG graphs in
        # upstream's own code; reduce-overhead needs torch_npu's NPU graphs and stays undeclared.
        "capabilities": {"cache", "ge_cache", "rng_rejection", "threshold_override", "multi_rank_export",
                         "eager_run"},
        "label": LABEL,
        "divergences": DIVERGENCES,
        "set_externalize_threshold": threshold_hook(torchair),
    }


__getattr__ = lazy_surface(__name__, globals(), upstream, _conformance)
