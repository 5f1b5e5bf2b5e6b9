"""dynamo_export (SPEC section 4): a whole model, traced by Dynamo, written as a GE IR ``.air`` file.

``python -m torchair_ref.export.inspect FILE.air`` summarises an exported file.
"""

from .exporter import dynamo_export
from .weights import DEFAULT_THRESHOLD, externalize_threshold

__all__ = ["DEFAULT_THRESHOLD", "dynamo_export", "externalize_threshold"]
