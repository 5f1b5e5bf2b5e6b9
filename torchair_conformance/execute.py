"""EX-11: run an exported graph with the project's GE executor (``ge_executor``, CPU kernels to CANN's documented
semantics) and hold its outputs to the model's eager outputs under the suite's tolerance table.

The executor is a leaf package that imports no implementation under test (``tests/test_layers.py`` checks), and the
``.air`` is read here with the suite's own GE IR classes (``torchair_conformance.ge_ir``), never the executor's or an
implementation's: the executor only receives the parsed graph and the weight files its ``FileConstant`` ops name.
A relative ``file_path`` is taken against the working directory, as EX-6's checks read it. EX-7 leaves the order of
the ``Data`` ops open ("in some order"), so the model's inputs are fed in each order that fits the ``Data`` descs
(dtype and static dims) and the one closest to eager is judged.

Two 16-bit implementations of an ill-conditioned model (a LayerNorm over a near-constant row, say) round in
different places, and the model amplifies each one's rounding into errors of the same order that need not agree.
So an output may also differ from eager by a small multiple (`ROUNDING_SLACK`) of eager's own worst error against
the model run in float64 (`reference_outputs`), on top of the tolerance table. Where the model is well conditioned
that error is a rounding step or two, and a wrong graph (a dropped bias, a swapped transpose) still fails.
"""

from __future__ import annotations

import copy
import itertools
import os
from collections.abc import Mapping, Sequence
from typing import Any

import torch

import ge_executor
from torchair_conformance import exports, ge_ir
from torchair_conformance.assertions import tolerance

__all__ = ["ROUNDING_SLACK", "user_tensors", "run_air", "eager_outputs", "reference_outputs", "differences",
           "closest"]

#: how many times eager's own worst error (against float64) an output may add to the tolerance table's bound
ROUNDING_SLACK = 4


def user_tensors(args: tuple, kwargs: Mapping[str, Any]) -> list[torch.Tensor]:
    """The call's tensor inputs: positional ones, then keyword ones."""
    return [t for t in [*args, *kwargs.values()] if isinstance(t, torch.Tensor)]


def _fits(desc: Any, t: torch.Tensor) -> bool:
    dims = list(desc.shape.dim)
    return desc.dtype == ge_ir.proto_dtype(t.dtype) and len(dims) == t.dim() and all(
        d in (-1, s) for d, s in zip(dims, t.shape))


def run_air(path: os.PathLike | str, tensors: Sequence[torch.Tensor]) -> list[list[torch.Tensor]]:
    """EX-11: load ``path`` (its ``graph[0]``) with the GE executor and run it once per order of ``tensors`` that
    fits its ``Data`` ops (index order); the outputs of each run that completes. An error names the Data descs when
    none fits; the first order's error is raised when none runs."""
    model = exports.load_air(path)
    data = sorted((op for op in model.graph[0].op if op.type == "Data"), key=lambda op: op.attr["index"].i)
    orders = [list(p) for p in itertools.permutations(tensors)
              if len(p) == len(data) and all(_fits(op.output_desc[0], t) for op, t in zip(data, p))]
    if not orders:
        raise AssertionError(
            f"EX-11: no order of the inputs {[(t.dtype, tuple(t.shape)) for t in tensors]} fits the Data ops "
            f"{[(op.name, list(op.output_desc[0].shape.dim)) for op in data]} of {path}")
    graph = ge_executor.load(model, weights_dir=os.getcwd())
    runs, failures = [], []
    for order in orders:
        # An order that fits the descs can still be the wrong one (token ids and an all-ones mask are both int64 of
        # one shape; ids in the mask's place make a Gather index out of range): the executor's refusal is kept
        # only when no order runs.
        try:
            runs.append(list(graph.run(order)))
        except Exception as exc:  # noqa: BLE001 - re-raised below when every order fails
            failures.append(exc)
    if not runs:
        raise failures[0]
    return runs


def closest(runs: Sequence[Sequence[torch.Tensor]], want: Sequence[torch.Tensor],
            truth: Sequence[torch.Tensor] | None = None) -> list[torch.Tensor]:
    """The run (of ``run_air``'s) whose outputs are closest to ``want``: fewest mismatches, then smallest excess
    over the tolerance."""
    def badness(got: Sequence[torch.Tensor]) -> tuple[int, float]:
        found = differences(got, want, truth)
        return sum(1 for m, _, _ in found if m) + (len(got) != len(want)), max(
            [d - b for m, d, b in found if not m] or [0.0])

    return list(min(runs, key=badness))


def eager_outputs(module: torch.nn.Module, args: tuple, kwargs: Mapping[str, Any]) -> list[torch.Tensor]:
    """The model's own outputs on ``(args, kwargs)``, flattened (a tuple result is its elements in order)."""
    with torch.no_grad():
        result = module(*args, **kwargs)
    return list(result) if isinstance(result, (tuple, list)) else [result]


def reference_outputs(module: torch.nn.Module, args: tuple, kwargs: Mapping[str, Any]) -> list[torch.Tensor] | None:
    """The model and its floating-point inputs in float64: the exact result that eager and the graph approximate.
    None where the model does not run in float64 (a kernel it calls takes no float64: transformers' MoE experts call
    ``torch.nn.functional.grouped_mm``, float32/16 only); its outputs are then held to the tolerance table alone,
    with no ``ROUNDING_SLACK`` (stricter, never more lenient)."""
    def wide(value: Any) -> Any:
        return value.double() if isinstance(value, torch.Tensor) and value.is_floating_point() else value

    exact = copy.deepcopy(module).double()
    try:
        outputs = eager_outputs(exact, tuple(wide(a) for a in args), {k: wide(v) for k, v in kwargs.items()})
    except RuntimeError:
        return None
    return [t.double() for t in outputs]


def differences(got: Sequence[torch.Tensor], want: Sequence[torch.Tensor],
                truth: Sequence[torch.Tensor] | None = None) -> list[tuple[str, float, float]]:
    """Per output: a description of a shape/dtype mismatch (empty when none), max |got - want| (less
    ``ROUNDING_SLACK`` times eager's worst error against ``truth``, when given) and what the tolerance table allows
    there (atol + rtol * max |want|)."""
    found = []
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape or g.dtype != w.dtype:
            found.append((f"{tuple(g.shape)} {g.dtype}, expected {tuple(w.shape)} {w.dtype}", float("inf"), 0.0))
            continue
        tol = tolerance(w.dtype)
        diff = (g.double() - w.double()).abs().max().item() if w.numel() else 0.0
        if truth is not None and w.numel():
            diff -= ROUNDING_SLACK * (w.double() - truth[i]).abs().max().item()
        bound = tol["atol"] + tol["rtol"] * (w.double().abs().max().item() if w.numel() else 0.0)
        found.append(("", diff, bound))
    return found
