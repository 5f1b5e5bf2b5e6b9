"""IMPL-2 hooks shared by both adapters of upstream TorchAir (``torchair_npu`` and ``torchair_cpu``).

They act on an imported upstream ``torchair`` package and never import ``torch_npu`` themselves.
"""

from __future__ import annotations

import contextlib
from types import ModuleType
from typing import Any, Callable, Iterator, Tuple

__all__ = ["DIVERGENCES", "threshold_hook"]

#: the known-divergence list both adapters share (conformance/known_divergences/torchair.txt)
DIVERGENCES = "torchair"


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
        def overridden(inputs: Any, weight_name: Any, export_graph: Any) -> Tuple[bool, int]:
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
