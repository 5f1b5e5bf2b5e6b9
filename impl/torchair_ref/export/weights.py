"""Weights of an export: inline ``Const`` or external ``FileConstant``, all or nothing (EX-6).

The rule: with ``graph bytes`` = the serialized ModelDef while weights are still ``Data`` ops, and ``weight bytes``
= sum of ``numel * element_size`` over the distinct weights the graph uses (a tensor registered under two names is
one weight), the weights go to files iff ``graph bytes + weight bytes > threshold``. The threshold keeps the
``.air`` under protobuf's 2 GiB message limit with 200 MiB to spare; ``externalize_threshold`` lowers it for tests.

Weight file format (documented here, made by ``weight_file_outputs``): the tensor's elements in C order and the
machine's native byte order, no header; bfloat16 and other types numpy lacks are written as their raw storage.
The file is named by the weight's fqn with ``.`` replaced by ``_`` and lies in the rank's directory; the
``FileConstant``'s ``file_path`` attr holds its absolute path. A name that would leave that directory (one holding a
path separator, such as a parameter named like an absolute path) is refused with a ValueError.
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import torch

from ge_executor import ge_ir

DEFAULT_THRESHOLD = (2048 - 200) * 1024 * 1024
_THRESHOLD: ContextVar[int] = ContextVar("torchair_ref_externalize_threshold", default=DEFAULT_THRESHOLD)
NOT_CONTIGUOUS = "The value of inputs must be contiguous."


@contextmanager
def externalize_threshold(nbytes: int) -> Iterator[None]:
    """EX-6 (IMPL-2 ``set_externalize_threshold``): exports inside the block use ``nbytes`` as the threshold."""
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
        raise ValueError(f"externalize_threshold: nbytes must be an int >= 0, got {nbytes!r}")
    token = _THRESHOLD.set(nbytes)
    try:
        yield
    finally:
        _THRESHOLD.reset(token)


def current_threshold() -> int:
    """EX-6: the threshold in force (the default unless inside ``externalize_threshold``)."""
    return _THRESHOLD.get()


def externalize(graph_bytes: int, weight_bytes: int, threshold: int) -> bool:
    """EX-6: True when the weights must go to files."""
    return graph_bytes + weight_bytes > threshold


def weight_file_name(fqn: str) -> str:
    """EX-6: the weight file's name for a parameter or buffer fqn."""
    return fqn.replace(".", "_")


def is_plain_file_name(name: str) -> bool:
    """EX-6: True when `name` names a file in the folder it is joined to (no separator, not '.' or '..', no NUL)."""
    return name not in ("", os.curdir, os.pardir) and not any(
        sep and sep in name for sep in (os.sep, os.altsep, "\0")
    )


@dataclass(frozen=True)
class Weight:
    """A tensor that a ``Data`` op of the graph stands for and that ``place_weights`` turns into a constant."""

    op_name: str
    fqn: str
    tensor: torch.Tensor

    @property
    def nbytes(self) -> int:
        return self.tensor.numel() * self.tensor.element_size()


def check_weight(weight: Weight) -> None:
    """EX-6: a weight must be a contiguous strided tensor with real storage."""
    t = weight.tensor
    if t.layout != torch.strided or t.device.type == "meta":
        raise TypeError(
            f"weight {weight.fqn!r} is a {t.layout} tensor on {t.device}; only dense tensors with values can be "
            "exported (load the real weights first)"
        )
    if not t.is_contiguous():
        raise AssertionError(
            f"{NOT_CONTIGUOUS} Weight {weight.fqn!r} has shape {tuple(t.shape)} and stride {t.stride()}; "
            "make it contiguous (e.g. param.data = param.data.contiguous()) before exporting."
        )


def raw_bytes(t: torch.Tensor) -> bytes:
    """EX-6: a contiguous tensor's elements as raw bytes (C order, native byte order)."""
    t = t.detach().cpu()
    n = t.numel() * t.element_size()
    # Read the storage directly: works for every dtype (bfloat16, float8, ...) and needs no numpy.
    return ctypes.string_at(t.data_ptr(), n) if n else b""


def _data_ops(graph: Any) -> dict[str, Any]:
    return {op.name: op for op in graph.op if op.type == "Data"}


def _static_shape(op: Any, tensor: torch.Tensor) -> None:
    """A constant has its value's shape: with ``dynamic=True`` Dynamo may give a captured tensor's dims symbols of
    their own (``-1`` in the ``Data`` desc), but the graph holds that one value (GE: a ``Const``'s shape is static)."""
    op.output_desc[0].shape.dim[:] = list(tensor.shape)


def _to_const(op: Any, tensor: torch.Tensor) -> None:
    _static_shape(op, tensor)
    op.type = "Const"
    del op.attr["index"]
    op.attr["value"].t.desc.CopyFrom(op.output_desc[0])
    op.attr["value"].t.data = raw_bytes(tensor)


def _to_file_constant(op: Any, tensor: torch.Tensor, path: str) -> None:
    _static_shape(op, tensor)
    desc = op.output_desc[0]
    op.type = "FileConstant"
    del op.attr["index"]
    op.attr["shape"].list.i.extend(desc.shape.dim)
    op.attr["shape"].list.val_type = ge_ir.ListValueType.Value("VT_LIST_INT")
    # A dt attr: GE's C++ numbering, not the protobuf enum of the descriptor (EX-6, GE_IR.md).
    op.attr["dtype"].dt = ge_ir.CPP_DATA_TYPES[ge_ir.DataType.Name(desc.dtype)]
    op.attr["file_path"].s = path.encode()
    op.attr["file_id"].s = b""


def inline_constants(graph: Any, constants: list[Weight]) -> None:
    """Turn the ``Data`` ops of captured non-weight tensors into inline ``Const`` ops (they are never externalised)."""
    ops = _data_ops(graph)
    for constant in constants:
        check_weight(constant)
        _to_const(ops[constant.op_name], constant.tensor)


def place_weights(graph: Any, weights: list[Weight], weight_dir: str, *, graph_bytes: int, threshold: int) -> list[
    tuple[str, Weight]
]:
    """EX-6: make every weight's ``Data`` op a ``Const`` or every one a ``FileConstant``.

    Returns the weight files to write, ``(absolute path, weight)``, empty when the weights are inline.
    """
    for weight in weights:
        check_weight(weight)
    ops = _data_ops(graph)
    if not externalize(graph_bytes, sum(w.nbytes for w in weights), threshold):
        for weight in weights:
            _to_const(ops[weight.op_name], weight.tensor)
        return []
    files: list[tuple[str, Weight]] = []
    owners: dict[str, str] = {}
    folder = os.path.abspath(weight_dir)
    for weight in weights:
        path = os.path.join(folder, weight_file_name(weight.fqn))
        if not is_plain_file_name(weight_file_name(weight.fqn)) or os.path.dirname(path) != folder:
            raise ValueError(
                f"weight {weight.fqn!r} cannot be written to a file in {folder}: its file name "
                f"{weight_file_name(weight.fqn)!r} is empty, '.', '..', or holds a path separator or NUL; rename the "
                "parameter or buffer"
            )
        if path in owners:
            raise ValueError(
                f"weights {owners[path]!r} and {weight.fqn!r} would both be written to {path} (fqn with '.' -> '_'); "
                "rename one of them"
            )
        owners[path] = weight.fqn
        _to_file_constant(ops[weight.op_name], weight.tensor, path)
        files.append((path, weight))
    return files


def reindex_data(graph: Any) -> None:
    """EX-6: number the remaining ``Data`` ops 0..n-1 in op order."""
    for index, op in enumerate(op for op in graph.op if op.type == "Data"):
        op.attr["index"].i = index


def weight_file_outputs(files: list[tuple[str, Weight]]) -> list[tuple[str, Callable[[], bytes]]]:
    """EX-6: each weight file as an output for ``outputs.write_all``: its path and what makes its raw bytes."""
    return [(path, functools.partial(raw_bytes, weight.tensor)) for path, weight in files]
