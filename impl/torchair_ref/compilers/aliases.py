"""Outputs that alias an input or another output, rebuilt as views of the live tensors on every call (SPEC CC-18).

A method may return an input itself, a view of one (`x.view(-1)`, `torch.view_as_real(z)`) or a view of another of
its outputs. The compiled graph alone does not promise such aliasing: AOTAutograd's runtime wrapper regenerates each
of those outputs from its live base after the graph ran, and a warm start runs the graph without that wrapper. So
the record names them, and `rebuilding` does what the wrapper does (its `as_strided` fallback), with no Dynamo or
AOTAutograd import: the input itself where the output is the input, else a view of the live base with the size, stride
and storage offset of the graph's output (`as_strided`), through `view_as_real`/`view_as_complex` where the view changed
the dtype so. The result is a real view of the caller's tensor, as in eager (`._base`, shared storage), never a stale
copy.

Record: `graph["output_aliases"] = [{"output": i, "kind": KIND, "base": j}, ...]`, KIND one of `"input"` (output i
is graph input j), `"view_of_input"` (a view of graph input j), `"view_of_output"` (a view of graph output j).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

KINDS = ("input", "view_of_input", "view_of_output")


def check(aliases: Any, n_inputs: int | None = None) -> list[tuple[int, str, int]]:
    """CC-17: the recorded aliases as (output, kind, base), or ValueError naming the malformed entry."""
    if not isinstance(aliases, list):
        raise ValueError(f"the recorded output aliases are a {type(aliases).__name__}, not a list")
    plan = []
    for entry in aliases:
        ok = isinstance(entry, dict) and entry.get("kind") in KINDS and all(
            type(entry.get(key)) is int and entry[key] >= 0 for key in ("output", "base"))
        if ok and n_inputs is not None and entry["kind"] != "view_of_output" and entry["base"] >= n_inputs:
            ok = False
        if not ok:
            raise ValueError(f"recorded output alias {entry!r:.200} is not an output index, one of {KINDS} and a "
                             f"base index" + (f" below {n_inputs}" if n_inputs is not None else ""))
        plan.append((entry["output"], entry["kind"], entry["base"]))
    return plan


def rebuilding(boxed: Callable[[list[Any]], Any], aliases: list[Any],
               n_inputs: int | None = None) -> Callable[[list[Any]], Any]:
    """CC-18: `boxed` with the recorded aliasing outputs regenerated from the live inputs and outputs."""
    plan = check(aliases, n_inputs)
    input_bases = sorted({base for _, kind, base in plan if kind != "view_of_output"})

    def call(args: list[Any]) -> Any:
        bases = {j: args[j] for j in input_bases}  # before the graph runs: a boxed call may clear `args`
        outputs = boxed(args)
        rebuilt = list(outputs)
        for i, kind, j in plan:
            if kind == "input":
                rebuilt[i] = bases[j]
            else:
                rebuilt[i] = view_of(bases[j] if kind == "view_of_input" else outputs[j], outputs[i])
        return type(outputs)(rebuilt) if isinstance(outputs, tuple) else rebuilt

    return call


def view_of(base: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """The tensor eager's view op would have returned: the sizes, strides, storage offset and dtype of `out` (the
    graph's output, which shares `base`'s storage) over the live `base`'s storage."""
    if out.dtype == base.dtype:
        return base.as_strided(out.size(), out.stride(), out.storage_offset())
    if base.is_complex() and torch.view_as_real(base).dtype == out.dtype:
        return torch.view_as_real(base).as_strided(out.size(), out.stride(), out.storage_offset())
    if out.is_complex() and out.real.dtype == base.dtype:
        pairs = base.untyped_storage().nbytes() // out.element_size()
        return torch.view_as_complex(base.as_strided((pairs, 2), (2, 1), 0)).as_strided(
            out.size(), out.stride(), out.storage_offset())
    # `view(dtype)` between element types that are not a complex/real pair is no view in eager either (no `_base`):
    # the same storage, read as the other dtype.
    return torch.empty((0,), dtype=out.dtype, device=base.device).set_(
        base.untyped_storage(), out.storage_offset(), out.size(), out.stride())
