"""Graph compilers behind `CompilerConfig` (SPEC CC-7, CC-13, CC-14, CC-19), in one registry.

Each compiler is a module implementing `GraphCompiler`: `NAME`, `build` (a Dynamo graph through AOTAutograd to a
runnable, leaving our `CompiledGraph` of it on the `Job`: a callable plus a JSON-able record) and `load` (the same
callable rebuilt from the record in a fresh process without Dynamo, AOTAutograd or Inductor's compiler). The
pipeline (`backend`) picks one by `select` and builds with it; a warm start loads with the one `for_record` names.

- `eager`      (`debug.run_eagerly=True`, and `reduce-overhead` off CUDA): the captured ATen graph run op by op.
- `inductor`   (`mode="max-autotune"`, the default): Inductor's generated wrapper and kernels.
- `cudagraphs` (`mode="reduce-overhead"` on CUDA): the eager graph replayed from a captured CUDA graph.

`aliases` rebuilds the outputs that alias an input or another output, whichever compiler ran the graph.

The cold side of every module imports torch's compiler stack lazily (`torchair_ref._torch`), so that a warm start
never pays for it.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from torchair_ref.errors import UncacheableError

#: compiler name -> module implementing `GraphCompiler` (imported when first used)
REGISTRY = {
    "eager": "torchair_ref.compilers.eager",
    "inductor": "torchair_ref.compilers.inductor",
    "cudagraphs": "torchair_ref.compilers.cudagraphs",
}


@dataclass
class CompiledGraph:
    """A compiled inference graph: `boxed` takes a list of inputs (and may clear it) and returns the outputs."""

    boxed: Callable[[list[Any]], Any]
    record: dict[str, Any]
    #: files the record refers to: name inside the cache's kernel folder -> bytes (written beside the artifact)
    files: dict[str, bytes] = field(default_factory=dict)
    #: why this graph cannot be written to a cache (None: it can)
    uncacheable: UncacheableError | None = None


@dataclass
class Job:
    """What the pipeline asks of a compiler for one Dynamo graph, and (`graph`) what the compiler made of it."""

    decompositions: dict[Any, Any]
    #: keep copies of the compiled kernels' shared objects in the record's files (`ge_cache=True`)
    keep_kernels: bool
    #: the pipeline's review of AOTAutograd's ATen graph and its inputs: (why it is not cacheable, or None; the
    #: aliasing outputs as `aliases` records them); it may raise to reject the graph (CC-13)
    review: Callable[[Any, list[Any]], tuple[UncacheableError | None, list[dict[str, Any]]]]
    graph: CompiledGraph | None = None

    def accept(self, graph: CompiledGraph, problem: UncacheableError | None,
               aliases: list[dict[str, Any]]) -> CompiledGraph:
        """Keep `graph` as this job's result, not cacheable for `problem`, naming its aliasing outputs (CC-18)."""
        graph.uncacheable = graph.uncacheable or problem
        if aliases and graph.uncacheable is None:
            graph.record["output_aliases"] = aliases
        self.graph = graph
        return graph


class GraphCompiler(Protocol):
    """A graph compiler module of `REGISTRY`."""

    NAME: str

    def build(self, gm: Any, example_inputs: list[Any], job: Job) -> Callable[..., Any]:
        """CC-7: compile Dynamo's graph for inference; returns the callable Dynamo runs, sets `job.graph`."""

    def load(self, record: dict[str, Any], kernel_dir: str, guaranteed: list[Any] | None) -> Callable[[list[Any]], Any]:
        """CC-14: the boxed callable of a record this compiler wrote, rebuilt without tracing."""


def select(mode: str, run_eagerly: bool, device: str) -> str:
    """CC-7: the graph compiler a configuration selects for a graph on `device`."""
    if mode == "reduce-overhead" and device == "cuda":
        return "cudagraphs"
    if run_eagerly or mode == "reduce-overhead":
        return "eager"
    return "inductor"


def get(name: str) -> GraphCompiler:
    """The registered compiler `name` (ValueError naming the known ones for any other)."""
    if name not in REGISTRY:
        raise ValueError(f"unknown graph compiler {name!r}; known: {sorted(REGISTRY)}")
    module = importlib.import_module(REGISTRY[name])
    if getattr(module, "NAME", None) != name:
        raise ValueError(f"{REGISTRY[name]} is registered as compiler {name!r} but names itself "
                         f"{getattr(module, 'NAME', None)!r}; fix REGISTRY or its NAME")
    return module  # a module implements the protocol


def for_record(record: dict[str, Any]) -> GraphCompiler:
    """CC-14: the compiler that loads `record` (a CUDA-graph record is an eager one marked `cudagraphs`)."""
    name = "cudagraphs" if record.get("cudagraphs") else record.get("compiler")
    if name not in REGISTRY:
        raise ValueError(f"unknown graph compiler {name!r} in cache record; known: {sorted(REGISTRY)}")
    return get(name)


def load(record: dict[str, Any], kernel_dir: str, guaranteed: list[Any] | None = None) -> Callable[[list[Any]], Any]:
    """CC-14: rebuild a compiled graph's boxed callable from its record, without tracing. `guaranteed[i]` is the
    (sizes, strides) of input i that the caller checks before every call (None: not all static), so that the graph
    need not check them again. Outputs that alias an input or another output are rebuilt as views of the live
    tensors (`aliases`)."""
    boxed = for_record(record).load(record, kernel_dir, guaranteed)
    if record.get("output_aliases"):
        from torchair_ref.compilers.aliases import rebuilding

        boxed = rebuilding(boxed, record["output_aliases"], len(guaranteed) if guaranteed is not None else None)
    return boxed
