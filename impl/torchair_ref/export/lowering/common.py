"""Helpers every lowering family uses: the traced output's descriptor and the refusal of an unsupported variant."""

from __future__ import annotations

from typing import Any

import torch.fx

from ..ge_build import UnsupportedOperatorError, spec_of, where


def out(node: torch.fx.Node, index: int | None = None) -> tuple[Any, tuple[int, ...]]:
    """(dtype, dims) of the node's traced output (``index`` of a multi-output node)."""
    val = node.meta["val"]
    return spec_of(val if index is None else val[index])


def unsupported(node: torch.fx.Node, why: str) -> UnsupportedOperatorError:
    """EX-7: the error for a call of a lowered operator with arguments its lowering does not cover."""
    return UnsupportedOperatorError(
        f"dynamo_export: {node.target} {why}; the reference has no GE lowering for that (EX-7). It is called at "
        f"{where(node)}.")
