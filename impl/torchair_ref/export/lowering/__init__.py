"""EX-7: the reference's table of GE lowerings, one module per op family.

Each entry maps an ATen operator (or a Python operator on symbolic sizes) to a function ``(builder, node, *args,
**kwargs) -> Value | list[Value]`` that emits the GE op, or small group of ops, upstream TorchAir's converter emits for
it (``torchair/_ge_concrete_graph/ge_converter/aten/<op>.py`` in the torch-npu 2.14.0 wheel), with GE's input order
and attrs. Tensor arguments arrive as ``ge_build.Value``; everything else as traced.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import arith, collective, shapes

LOWERINGS: dict[Any, Callable[..., Any]] = {**arith.TABLE, **shapes.TABLE, **collective.TABLE}
