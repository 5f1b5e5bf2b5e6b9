"""dynamo_export (SPEC section 4): a whole model, traced by Dynamo, written as a GE IR ``.air`` file.

``python -m torchair_ref.export.inspect FILE.air`` summarises an exported file. The public names are resolved on
first use, so that the inspect CLI and ``ge_ir`` load without importing torch.
"""

from __future__ import annotations

from torchair_ref._lazy import surface

#: public name -> module that defines it
_SURFACE = {
    "dynamo_export": "torchair_ref.export.exporter",
    "externalize_threshold": "torchair_ref.export.weights",
    "DEFAULT_THRESHOLD": "torchair_ref.export.weights",
}
__all__ = list(_SURFACE)
__getattr__, __dir__ = surface(__name__, _SURFACE, globals())
