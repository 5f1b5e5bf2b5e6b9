"""dynamo_export (SPEC section 4)."""
from __future__ import annotations

from typing import Any


def dynamo_export(*args: Any, model: Any, **kwargs: Any) -> None:
    """EX-1: not implemented yet."""
    raise NotImplementedError("dynamo_export comes with the dynamo_export issue (#4); this build has no exporter yet")
