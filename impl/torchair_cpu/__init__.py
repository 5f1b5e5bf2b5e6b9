"""IMPL-4: upstream TorchAir's own Python, from the torch-npu wheel, run on CPU (``--impl torchair_cpu``).

At first use of the IMPL-1 surface or of ``__conformance__`` the wheel of ``$TORCH_NPU_VERSION`` (default 2.14.0) is
fetched with ``pip download --no-deps`` and its TorchAir sources extracted into a cache outside the repository
(``torchair_cpu.wheel``); a meta-path finder makes them importable as ``torchair`` with stand-ins for the four native
modules (``torchair_cpu.finder``, ``torchair_cpu.standins``). ``torch_npu`` itself is never imported (IMPL-3).

What runs on CPU (conformance/README.md has the list): configs and backends, ``cache_compile``'s validation and
path rules up to the first compile, max-autotune with ``debug.run_eagerly`` (which upstream does not cache), and
``dynamo_export`` (the ``.air`` is upstream's own graph). What needs GE (a graph compile, hence every cache file) or
torch-npu (reduce-overhead imports it) raises or is not declared.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, Dict

from torchair_npu.hooks import lazy_surface

__all__ = ["CompilerConfig", "get_npu_backend", "dynamo_export", "inference", "logger", "__conformance__"]


def upstream() -> ModuleType:
    """IMPL-4: upstream's ``torchair``, from the wheel's extracted sources with the native modules stood in for."""
    from torchair_cpu import finder, wheel

    finder.install(wheel.ensure() / "torchair")
    return importlib.import_module("torchair")


def _conformance() -> Dict[str, Any]:
    """IMPL-2: device cpu; torch, the wheel's torch_npu version and CANN (the wheel names none: null); only what runs
    on CPU."""
    import torch

    from torchair_cpu import wheel
    from torchair_npu.hooks import DIVERGENCES, threshold_hook

    torchair = upstream()
    return {
        "device": "cpu",
        "versions": {"torch": torch.__version__, "torch_npu": wheel.wheel_version(wheel.ensure()), "cann": None},
        # No "cache": upstream writes a cache only for a GE-compiled graph (needs GE) or in reduce-overhead (needs
        # torch_npu's NPUGraph); max-autotune with debug.run_eagerly runs but writes none (CC-7 (a)).
        "capabilities": {"threshold_override", "multi_rank_export", "eager_run"},
        "divergences": DIVERGENCES,
        "set_externalize_threshold": threshold_hook(torchair),
    }


__getattr__ = lazy_surface(__name__, globals(), upstream, _conformance)
