"""Copies of a module holding cached methods (SPEC CC-24): `copy.deepcopy` and `pickle`.

A cached callable copies as what `cache_compile` was given: the copied module's method and the same options. The
copy holds no lock, loaded graph or compiled state of the original: its first call resolves its own cache path and
loads the file there (a warm start) or compiles, as a fresh `cache_compile` of that module would. Decompositions are
keyed by `OpOverload`s, which do not pickle: they travel as (namespace, operator, overload) names. What rebuilds a copy
is `cached.rebuild` (beside the class it makes, so that this module and `cached` do not import each other).
"""
from __future__ import annotations

from typing import Any

import torch

from torchair_ref import _torch


def portable_decompositions(decompositions: dict[Any, Any]) -> list[tuple[Any, Any]]:
    """The decompositions as picklable pairs: an `OpOverload` key becomes its `("op", ns, name, overload)` name."""
    pairs = []
    for key, value in decompositions.items():
        if isinstance(key, _torch.op_overload()):
            namespace, name, overload = str(key).split(".")  # `aten.gelu.default`
            key = ("op", namespace, name, overload)
        pairs.append((key, value))
    return pairs


def decompositions_from(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    """The inverse of `portable_decompositions`."""
    decompositions: dict[Any, Any] = {}
    for key, value in pairs:
        if isinstance(key, tuple) and len(key) == 4 and key[0] == "op":
            _, namespace, name, overload = key
            key = getattr(getattr(getattr(torch.ops, namespace), name), overload)
        decompositions[key] = value
    return decompositions

