"""The eager graph compiler (`debug.run_eagerly=True`; `reduce-overhead` off CUDA): the ATen graph run op by op.

Record: `{"compiler": "eager", "code": <FX-generated Python source of the graph>, "globals": {name: ref},
"constants": {name: tensor as data}}`. The source only calls `torch.ops.*` overloads and the names in `globals`, each
an importable reference (`_refs`), and reads its tensor constants as `self.<name>` (`constants`).
"""
from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from torchair_ref import _refs, _torch
from torchair_ref.compilers import CompiledGraph, Job, constants
from torchair_ref.errors import UncacheableError

NAME = "eager"


def build(gm: Any, example_inputs: list[Any], job: Job) -> Callable[..., Any]:
    """CC-7: AOTAutograd's inference graph of Dynamo's `gm`, kept as Python source and run as it is."""
    return through_aot(gm, example_inputs, job, lambda graph: graph)


def through_aot(gm: Any, example_inputs: list[Any], job: Job,
                finish: Callable[[CompiledGraph], CompiledGraph]) -> Callable[..., Any]:
    """Dynamo's `gm` through AOTAutograd (input mutations kept in the graph), the ATen graph kept as source and
    handed to `finish` (which may wrap its callable) before the job takes it."""

    def forward_compiler(aten_gm: Any, inputs: list[Any]) -> Any:
        problem, aliases = job.review(aten_gm, inputs)
        return job.accept(finish(kept(aten_gm)), problem, aliases).boxed

    compiled_fn: Callable[..., Any] = _torch.aot_module_simplified()(
        gm, example_inputs, fw_compiler=forward_compiler, decompositions=job.decompositions,
        keep_inference_input_mutations=True,
    )
    return compiled_fn


def kept(aten_gm: Any) -> CompiledGraph:
    """The ATen graph as Python source (the record) and as the callable that runs it."""
    uncacheable = None
    held: dict[str, Any] = {}
    for node in aten_gm.graph.nodes:
        if node.op == "get_attr":
            held[str(node.target)] = getattr(aten_gm, str(node.target), None) if "." not in str(node.target) else None
    try:
        kept_constants = constants.encode(held)
    except UncacheableError as exc:
        uncacheable, kept_constants = exc, {}
    code = aten_gm.graph.python_code(root_module="self")
    refs: dict[str, dict[str, str]] = {}
    for name, obj in code.globals.items():
        try:
            refs[name] = _refs.describe(obj)
        except _refs.UnreferenceableError as exc:
            uncacheable = uncacheable or UncacheableError(f"the graph code needs {name}: {exc}")
    record = {"compiler": "eager", "code": code.src, "globals": refs, "constants": kept_constants}

    def boxed(args: list[Any]) -> Any:
        inputs = list(args)
        args.clear()
        return aten_gm(*inputs)

    boxed._boxed_call = True  # type: ignore[attr-defined]
    return CompiledGraph(boxed=boxed, record=record, uncacheable=uncacheable)


def load(record: dict[str, Any], kernel_dir: str, guaranteed: list[Any] | None = None) -> Callable[[list[Any]], Any]:
    """CC-14: rebuild the graph function from its source (`guaranteed` is unused: the ATen graph asserts nothing
    of its inputs)."""
    namespace = {name: _refs.resolve(ref) for name, ref in record["globals"].items()}
    exec(compile_source(record["code"]), namespace)  # noqa: S102 - our own verified cache file
    forward = namespace["forward"]
    held = types.SimpleNamespace(**constants.decode(record.get("constants", {})))  # what `self.<name>` reads

    def boxed(args: list[Any]) -> Any:
        inputs = list(args)
        args.clear()
        return forward(held, *inputs)

    return boxed


def compile_source(src: str) -> Any:
    """Compile graph source under a stable file name, so tracebacks point at the cache rather than at `<string>`."""
    import builtins

    return builtins.compile(src, "<torchair_ref eager graph>", "exec")
