"""IMPL-2 hooks shared by both adapters of upstream TorchAir (``torchair_npu`` and ``torchair_cpu``).

They act on an imported upstream ``torchair`` package and never import ``torch_npu`` themselves.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

__all__ = ["DIVERGENCES", "SURFACE", "lazy_surface", "threshold_hook"]

#: the known-divergence list both adapters share (torchair_conformance/known_divergences/torchair.txt)
DIVERGENCES = "torchair"
#: the IMPL-1 surface an adapter takes from upstream's ``torchair``
SURFACE = ("CompilerConfig", "get_npu_backend", "dynamo_export", "inference", "logger")


def lazy_surface(
    adapter: str, namespace: dict[str, Any], upstream: Callable[[], ModuleType], conformance: Callable[[], Any]
) -> Callable[[str], Any]:
    """IMPL-1/IMPL-2: an adapter's module ``__getattr__`` (PEP 562): the surface and ``__conformance__`` are resolved
    on first use (importing upstream then, not when the adapter is imported) and kept in ``namespace``."""

    def __getattr__(name: str) -> Any:
        if name == "__conformance__":
            value = conformance()
        elif name in SURFACE:
            value = getattr(upstream(), name)
        else:
            raise AttributeError(f"module {adapter!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    return __getattr__


def threshold_hook(torchair: ModuleType) -> Callable[[int], Any]:
    """EX-6 ``set_externalize_threshold``: a context manager factory that makes upstream's
    ``torchair._utils.export_utils._is_weight_externalized(inputs, weight_name, export_graph) -> (bool, n)`` (2.14.0)
    compare against ``nbytes`` instead of its ``(2048 - 200) MiB``; the sum it compares is upstream's own."""
    import importlib

    export_utils = importlib.import_module(f"{torchair.__name__}._utils.export_utils")
    original = getattr(export_utils, "_is_weight_externalized", None)
    if original is None:
        raise AttributeError(
            f"{export_utils.__file__} has no _is_weight_externalized: this torch-npu release decides weight "
            "externalisation elsewhere; the threshold hook needs updating for it")

    @contextlib.contextmanager
    def set_externalize_threshold(nbytes: int) -> Iterator[None]:
        def overridden(inputs: Any, weight_name: Any, export_graph: Any) -> tuple[bool, int]:
            size = export_graph.ByteSize()
            used = 0
            for inp in inputs:
                if id(inp) in weight_name:
                    size += inp.element_size() * inp.nelement()
                    used += 1
            return size > nbytes, used

        export_utils._is_weight_externalized = overridden
        try:
            yield
        finally:
            export_utils._is_weight_externalized = original

    return set_externalize_threshold
