"""`get_npu_backend` and the compile pipeline shared by it and `cache_compile` (SPEC CF-4, CC-7, CC-13, CC-19).

Pipeline: Dynamo's FX graph -> AOTAutograd inference graph (ATen, functionalized, input mutations kept in the graph)
-> the graph compiler that the config selects (`compilers`). This module imports Dynamo and Inductor only inside
functions: a warm start never calls it.
"""
from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from torchair_ref import _torch, compilers
from torchair_ref.errors import TorchairRefError, UncacheableError

logger = logging.getLogger("torchair_ref")

#: names of ATen/prims overloads that draw from the random generator but carry no `nondeterministic_seeded` tag
_RNG_OP_NAMES = ("inductor_random", "inductor_randint", "inductor_seeds", "inductor_lookup_seed", "philox_rand")


class RngOperatorError(TorchairRefError, RuntimeError):
    """CC-13: the graph holds an operator that draws from the random generator."""


def get_npu_backend(
    *, compiler_config: Any = None, custom_decompositions: dict[Any, Any] | None = None
) -> functools.partial[Callable[..., Any]]:
    """CF-4: a `torch.compile` backend bound to `compiler_config` (a fresh default config when None)."""
    from torchair_ref.config import CompilerConfig

    if compiler_config is None:
        compiler_config = CompilerConfig()
    elif not isinstance(compiler_config, CompilerConfig):
        raise TypeError(f"compiler_config must be a CompilerConfig, got {type(compiler_config).__name__}")
    if custom_decompositions is not None and not isinstance(custom_decompositions, dict):
        raise TypeError(
            "custom_decompositions must be a dict of OpOverload -> function (as from "
            f"{_torch.DECOMPOSITIONS_FROM}), got {type(custom_decompositions).__name__}"
        )
    return functools.partial(
        _npu_backend, compiler_config=compiler_config, custom_decompositions=custom_decompositions or {}
    )


def _npu_backend(
    gm: Any, example_inputs: list[Any], *, compiler_config: Any, custom_decompositions: dict[Any, Any]
) -> Callable[..., Any]:
    compiled = compile_dynamo_graph(gm, example_inputs, config=compiler_config, decompositions=custom_decompositions)
    return compiled.runnable


@dataclass
class Compilation:
    """What compiling one Dynamo graph produced: the callable Dynamo runs, and our record of the graph."""

    runnable: Callable[..., Any] = None  # type: ignore[assignment]
    #: the compiler's job, whose `graph` it sets when AOTAutograd hands it the ATen graph
    job: compilers.Job | None = None
    #: Dynamo graph placeholders: (source name, role, example value) in call order
    inputs: list[tuple[str, str, Any]] = field(default_factory=list)
    #: the Python type of the caller's value behind each placeholder ("module.QualName"; None where unknown): the
    #: example values are fake tensors, so a `__torch_function__` subclass shows only here (CC-21)
    input_types: list[str | None] = field(default_factory=list)
    device: str = "cpu"

    @property
    def graph(self) -> compilers.CompiledGraph | None:
        return self.job.graph if self.job is not None else None


def compile_dynamo_graph(
    gm: Any,
    example_inputs: list[Any],
    *,
    config: Any,
    decompositions: dict[Any, Any],
    reject_rng: bool = False,
    keep_kernels: bool = False,
) -> Compilation:
    """CC-7: compile one Dynamo graph for inference with the compiler `config` selects (`compilers.select`)."""
    result = Compilation(inputs=_graph_inputs(gm), input_types=_input_types(gm), device=_device_of(example_inputs))
    name = compilers.select(config.mode, config.debug.run_eagerly, result.device)
    expected_inputs = len(result.inputs)

    def review(aten_gm: Any, inputs: list[Any]) -> tuple[UncacheableError | None, list[dict[str, Any]]]:
        if reject_rng:
            reject_rng_ops(aten_gm)
        problem, aliases = _runtime_wrapper_problem(aten_gm, len(inputs), expected_inputs, name == "cudagraphs")
        return (UncacheableError(problem) if problem is not None else None), aliases

    result.job = compilers.Job(decompositions=decompositions, keep_kernels=keep_kernels, review=review)
    # AOTAutograd's own cache would hand back a compiled graph without calling our inner compiler.
    with _torch.functorch_config().patch(enable_autograd_cache=False):
        result.runnable = compilers.get(name).build(gm, example_inputs, result.job)
    return result


def reject_rng_ops(aten_gm: Any) -> None:
    """CC-13: raise if any node calls an operator that depends on the random generator."""
    op_overload = _torch.op_overload()
    for node in aten_gm.graph.nodes:
        if node.op == "call_function" and isinstance(node.target, op_overload) and draws_random(node):
            raise RngOperatorError(
                f"Cache compile does not support operator that depend on RNG, got {node.target} (node {node.name}); "
                "generate random values outside the cached method and pass them in as inputs."
            )


def draws_random(node: Any) -> bool:
    """Whether an ATen call draws from the random generator with the arguments it has in this graph.

    Ops tagged `nondeterministic_seeded` do, except when their dropout is off: attention kernels with
    `dropout_p == 0` and `native_dropout` outside training carry the tag but draw nothing.
    """
    target = node.target
    if target._opname in _RNG_OP_NAMES:
        return True
    if torch.Tag.nondeterministic_seeded not in target.tags:
        return False
    arguments = _bound_arguments(node)
    if "dropout_p" in arguments:
        dropout_p: object = arguments["dropout_p"]
        return dropout_p != 0
    if target._opname == "native_dropout":
        return bool(arguments.get("train", True)) and arguments.get("p", 1) != 0
    return True


def _bound_arguments(node: Any) -> dict[str, Any]:
    """The node's arguments by schema name, defaults filled in."""
    values = {}
    for i, argument in enumerate(node.target._schema.arguments):
        if i < len(node.args):
            values[argument.name] = node.args[i]
        elif argument.name in node.kwargs:
            values[argument.name] = node.kwargs[argument.name]
        elif argument.has_default_value():
            values[argument.name] = argument.default_value
    return values


def _runtime_wrapper_problem(
    aten_gm: Any, n_inputs: int, expected: int, cudagraphs: bool
) -> tuple[str | None, list[dict[str, Any]]]:
    """Why AOTAutograd's runtime wrapper does more than call the graph and regenerate aliasing outputs (a warm start
    runs the graph alone, then `compilers.aliases`), and the aliasing outputs as `compilers.aliases` records them.

    It reads AOTAutograd's private metadata: when this torch lays it out otherwise, the graph is not cacheable
    (the call itself still runs).
    """
    try:
        return _aot_metadata(aten_gm, n_inputs, expected, cudagraphs)
    except Exception as exc:  # noqa: BLE001 - a private API of another torch release: uncacheable, never a failure
        return f"AOTAutograd's metadata is not readable on torch {torch.__version__} ({exc!r})", []


def _aot_metadata(
    aten_gm: Any, n_inputs: int, expected: int, cudagraphs: bool
) -> tuple[str | None, list[dict[str, Any]]]:
    MutationType, OutputType, SubclassCreationMeta = _torch.aot_output_schemas()  # noqa: N806 - torch's names
    if n_inputs != expected:
        return f"AOTAutograd changed the graph inputs ({expected} -> {n_inputs})", []
    context = _torch.tracing_context().try_get()
    meta = getattr(context, "fw_metadata", None)
    if meta is None:
        return "AOTAutograd gave no metadata for the graph", []
    for i, info in enumerate(meta.input_info):
        if info.mutation_type not in (MutationType.NOT_MUTATED, MutationType.MUTATED_IN_GRAPH):
            return f"input {i} is mutated outside the graph ({info.mutation_type.name})", []
    if meta.num_intermediate_bases or meta.tokens or any(
        isinstance(m, SubclassCreationMeta) for m in meta.subclass_inp_meta
    ):
        return "the graph needs AOTAutograd's runtime wrappers (intermediate bases, effect tokens or subclasses)", []
    # What AOTAutograd's output handlers do for each kind: nothing, return the input, or regenerate a view.
    kinds = {OutputType.non_alias: None, OutputType.unsafe_view_alias: None, OutputType.custom_function_view: None,
             OutputType.is_input: "input", OutputType.alias_of_input: "view_of_input",
             OutputType.alias_of_intermediate_base_is_user_output: "view_of_output"}
    aliases = []
    for i, info in enumerate(meta.output_info):
        if info.output_type not in kinds:
            return f"output {i} aliases an intermediate the graph does not return ({info.output_type.name})", []
        if kinds[info.output_type] is not None:
            aliases.append({"output": i, "kind": kinds[info.output_type], "base": info.base_idx})
    if aliases:
        problem = _unviewed_alias(aten_gm, aliases, len(meta.output_info))
        if problem is not None:
            return problem, []
    if aliases and cudagraphs:
        return f"output {aliases[0]['output']} aliases an input or output, which a CUDA graph's replay copies", []
    return None, aliases


def _unviewed_alias(aten_gm: Any, aliases: list[dict[str, Any]], n_outputs: int) -> str | None:
    """Why the compiled graph's own value of an aliasing output is not a view of its base, if it is not (pure).

    A warm start rebuilds such an output from the size, stride and storage offset of the graph's value
    (`compilers.aliases.view_of`), which are only those of the view when the graph reaches the value from its base
    through view ops alone (not, e.g., through a buffer of its own holding a mutated input)."""
    nodes = list(aten_gm.graph.nodes)
    placeholders = [n for n in nodes if n.op == "placeholder"]
    (output,) = [n for n in nodes if n.op == "output"]
    values = output.args[0] if isinstance(output.args[0], (list, tuple)) else [output.args[0]]
    if len(values) != n_outputs:
        return f"the graph returns {len(values)} values for {n_outputs} outputs"
    for alias in aliases:
        if alias["kind"] == "input":
            continue
        base = placeholders[alias["base"]] if alias["kind"] == "view_of_input" else values[alias["base"]]
        node = values[alias["output"]]
        while node is not base and _is_view_call(node):
            node = node.args[0]
        if node is not base:
            return (f"output {alias['output']} is a view of {alias['kind'][8:]} {alias['base']} that the compiled "
                    "graph computes apart from it (e.g. from an input it mutates), so a warm start cannot rebuild the "
                    "view")
    return None


def _is_view_call(node: Any) -> bool:
    op_overload: type[Any] = _torch.op_overload()  # type[Any]: the isinstance below leaves node.target Any
    return (node.op == "call_function" and isinstance(node.target, op_overload) and node.target.is_view
            and bool(node.args))


def _graph_inputs(gm: Any) -> list[tuple[str, str, Any]]:
    inputs = []
    for node in gm.graph.nodes:
        if node.op != "placeholder":
            continue
        grapharg = node.meta.get("grapharg")
        source = grapharg.source.name if grapharg is not None and grapharg.source is not None else node.name
        source = source() if callable(source) else source
        if _torch.PARAMETER_SOURCE in source:
            role = "parameter"
        elif _torch.BUFFER_SOURCE in source:
            role = "buffer"
        else:
            role = "user_input"
        inputs.append((source, role, node.meta.get("example_value")))
    return inputs


def _input_types(gm: Any) -> list[str | None]:
    """The type of each placeholder's real value (Dynamo's GraphArg keeps it beside the fake example)."""
    found: list[str | None] = []
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            real = getattr(node.meta.get("grapharg"), "example", None)
            found.append(f"{type(real).__module__}.{type(real).__qualname__}" if real is not None else None)
    return found


def _device_of(example_inputs: list[Any]) -> str:
    for value in example_inputs:
        if isinstance(value, torch.Tensor) and value.device.type != "cpu":
            return value.device.type
    return "cpu"
