"""dynamo_export (SPEC section 4): a whole model, traced by Dynamo, written as a GE IR ``.air`` file.

``python -m torchair_ref.export.inspect FILE.air`` summarises an exported file. The public names are resolved on
first use, so that the inspect CLI and ``ge_ir`` load without importing torch.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> module that defines it
_SURFACE = {
    "dynamo_export": "torchair_ref.export.exporter",
    "externalize_threshold": "torchair_ref.export.weights",
    "DEFAULT_THRESHOLD": "torchair_ref.export.weights",
}
__all__ = list(_SURFACE)


def __getattr__(name: str) -> Any:
    if name not in _SURFACE:
        raise AttributeError(f"module 'torchair_ref.export' has no attribute {name!r}")
    value = getattr(importlib.import_module(_SURFACE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
