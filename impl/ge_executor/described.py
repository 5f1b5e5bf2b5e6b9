"""EX-11, IMPL-4: the static shapes a graph describes for its results, checked against what the kernels compute.

GE compiles a graph with the shapes its descs state and checks each op's result against them: a result whose shape
differs from a static description is an error there, so here too (``ShapeMismatchError``, naming the op). A kernel
never clamps or shrinks its way past a description (a ``StridedSliceV2`` described as ``[4, w]`` that would give 2
rows on this input fails instead).

What counts as a description: an op's ``output_desc`` and the ``NetOutput``'s ``input_desc`` (the graph's outputs),
when it has dims; ``-1`` is a dim of any size, ``[-2]`` an unknown rank (nothing to check). A desc without dims says
nothing: upstream TorchAir leaves the output descs of the ops it builds without dims and gives shapes only to
``Data`` ops and to the graph outputs (``ge/_ge_graph.py:1594``, ``_ge_concrete_graph/ge_apis.py:33`` in the
torch-npu 2.14.0 wheel), while the reference describes every op.
"""

from __future__ import annotations

from typing import Any

import torch

from ge_executor.errors import ShapeMismatchError

__all__ = ["described_dims", "check_described"]


def described_dims(desc: Any) -> list[int] | None:
    """The dims ``desc`` states (``-1``: any size), or None when it states none (no dims, or unknown rank)."""
    if desc is None:
        return None
    dims = list(desc.shape.dim)
    if not dims or dims == [-2]:
        return None
    return dims


def check_described(result: torch.Tensor, desc: Any, what: str) -> None:
    """ShapeMismatchError naming ``what`` (the op and its output) when ``result`` does not fit ``desc``'s dims."""
    dims = described_dims(desc)
    if dims is None or not isinstance(result, torch.Tensor):
        return
    if len(dims) != result.dim() or any(d >= 0 and d != n for d, n in zip(dims, result.shape)):
        raise ShapeMismatchError(f"{what} has shape {list(result.shape)}, but the graph describes it as {dims} "
                                 "(-1: any size); GE's shape check rejects a result of another shape")
