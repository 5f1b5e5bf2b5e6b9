"""Graph compilers behind `CompilerConfig` (SPEC CC-7, CC-13, CC-19).

Each compiler turns an ATen inference graph into a `CompiledGraph`: a callable plus a JSON-able record from which
`load` rebuilds the same callable in a fresh process without Dynamo, AOTAutograd or Inductor's compiler.

- `eager`     (`debug.run_eagerly=True`, and `reduce-overhead` off CUDA): the captured ATen graph run op by op.
- `inductor`  (`mode="max-autotune"`, the default): Inductor's generated wrapper and kernels.
- CUDA graphs (`mode="reduce-overhead"` on CUDA): the eager graph replayed from a captured CUDA graph.

`aliases` rebuilds the outputs that alias an input or another output, whichever compiler ran the graph.

The cold side of every module imports torch's compiler stack lazily, so that a warm start never pays for it.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

from torchair_ref.errors import UncacheableError

#: compiler name in a record -> module that can load it
_LOADERS = {"eager": "torchair_ref.compilers.eager", "inductor": "torchair_ref.compilers.inductor"}


@dataclass
class CompiledGraph:
    """A compiled inference graph: `boxed` takes a list of inputs (and may clear it) and returns the outputs."""

    boxed: Callable[[list], Any]
    record: dict[str, Any]
    #: files the record refers to: name inside the cache's kernel folder -> bytes (written beside the artifact)
    files: dict[str, bytes] = field(default_factory=dict)
    #: why this graph cannot be written to a cache (None: it can)
    uncacheable: UncacheableError | None = None


def compiler_name(mode: str, run_eagerly: bool) -> str:
    """CC-7: the graph compiler a configuration selects (before the device is known)."""
    if run_eagerly or mode == "reduce-overhead":
        return "eager"
    return "inductor"


def load(record: dict[str, Any], kernel_dir: str, guaranteed: list | None = None) -> Callable[[list], Any]:
    """CC-14: rebuild a compiled graph's boxed callable from its record, without tracing. `guaranteed[i]` is the
    (sizes, strides) of input i that the caller checks before every call (None: not all static), so that the graph
    need not check them again. Outputs that alias an input or another output are rebuilt as views of the live
    tensors (`aliases`)."""
    name = record.get("compiler")
    if name not in _LOADERS:
        raise ValueError(f"unknown graph compiler {name!r} in cache record; known: {sorted(_LOADERS)}")
    boxed = importlib.import_module(_LOADERS[name]).load(record, kernel_dir, guaranteed)
    if record.get("cudagraphs"):
        from torchair_ref.compilers.cudagraphs import CudaGraphRunner

        boxed = CudaGraphRunner(boxed)
    if record.get("output_aliases"):
        from torchair_ref.compilers.aliases import rebuilding

        boxed = rebuilding(boxed, record["output_aliases"], len(guaranteed) if guaranteed is not None else None)
    return boxed
