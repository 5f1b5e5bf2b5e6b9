"""EX-4/EX-7 lowerings of c10d's functional collectives, after the wheel's
``ge_converter/c10d_functional/c10d_functional.py`` (torch >= 2.3 branch, lines 97-153):

- ``all_reduce`` -> ``HcomAllReduce`` (attrs ``reduction``, ``group``, ``fusion`` 0, ``fusion_id`` -1);
- ``all_gather_into_tensor`` -> ``HcomAllGather`` (``rank_size``, ``group``, ``fusion`` 0, ``fusion_id`` -1), the
  ranks' tensors concatenated along dim 0;
- ``reduce_scatter_tensor`` -> ``HcomReduceScatter`` (``reduction``, ``group``, ``rank_size``, ``fusion`` 0,
  ``fusion_id`` -1), dim 0 reduced and split among the ranks;
- ``all_to_all_single`` -> ``HcomAllToAllV(send_data, send_counts, send_displacements, recv_counts,
  recv_displacements)`` (``group``): upstream decomposes it (``_utils/__init__.py:472-476``, lines 170-179 there)
  into ``npu_define.all_to_all_single_npu``, whose converter writes the counts and displacements in elements as int64
  constants (``ge_converter/experimental/hcom_alltoall.py:81-122`` and ``_all_to_all_single``, 125-154); off an NPU
  it takes ``HcomAllToAllV`` even for equal splits (``HcomAllToAll`` only with CANN 8.2.RC1 or later on a device);
- ``wait_tensor`` -> ``Identity``.

``group`` is the c10d group name of the traced call (what ``_c10d_functional`` passes); upstream writes the HCCL
communicator's name on an NPU and ``tag=<tag>;rank_list=<ranks>`` on CPU (``hcom_utils.py:7-20``). Either names the
process group the GE executor runs the collective in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..op_builder import Builder, Value
from .common import out, unsupported

_c10d = torch.ops._c10d_functional
_REDUCTIONS = {"sum": "sum", "min": "min", "max": "max", "product": "prod"}


def _reduction(node: Any, reduce_op: str) -> str:
    if reduce_op.lower() not in _REDUCTIONS:
        raise unsupported(node, f"with reduce_op={reduce_op!r} (HCCL: {sorted(_REDUCTIONS)})")
    return _REDUCTIONS[reduce_op.lower()]


def all_reduce(b: Builder, node: Any, x: Value, reduce_op: str, group_name: str) -> Value:
    """``_c10d_functional.all_reduce`` -> ``HcomAllReduce`` (c10d_functional.py:106-119)."""
    dtype, shape = out(node)
    return b.one("HcomAllReduce", [("x", x)], dtype, shape,
                 {"reduction": _reduction(node, reduce_op), "group": group_name, "fusion": 0, "fusion_id": -1})


def all_gather_into_tensor(b: Builder, node: Any, x: Value, group_size: int, group_name: str) -> Value:
    """``_c10d_functional.all_gather_into_tensor`` -> ``HcomAllGather`` (c10d_functional.py:121-134)."""
    dtype, shape = out(node)
    return b.one("HcomAllGather", [("x", x)], dtype, shape,
                 {"rank_size": group_size, "group": group_name, "fusion": 0, "fusion_id": -1})


def reduce_scatter_tensor(b: Builder, node: Any, x: Value, reduce_op: str, group_size: int,
                          group_name: str) -> Value:
    """``_c10d_functional.reduce_scatter_tensor`` -> ``HcomReduceScatter`` (c10d_functional.py:136-153)."""
    dtype, shape = out(node)
    return b.one("HcomReduceScatter", [("x", x)], dtype, shape,
                 {"reduction": _reduction(node, reduce_op), "group": group_name, "rank_size": group_size,
                  "fusion": 0, "fusion_id": -1})


def all_to_all_single(b: Builder, node: Any, x: Value, output_split_sizes: list[Any], input_split_sizes: list[Any],
                      group_name: str) -> Value:
    """``_c10d_functional.all_to_all_single`` -> ``HcomAllToAllV``: rank k is sent ``input_split_sizes[k]`` rows
    and ``output_split_sizes[k]`` rows are received from it, counted in elements (rows times the elements of one
    row), displacements the running sums of the counts (hcom_alltoall.py:125-154, 110-120). Symbolic split sizes
    (``dynamic=True``) are computed in the graph (``Mul``, ``Add``, ``Pack``); a symbolic row size is refused."""
    dtype, shape = out(node)
    if -1 in x.shape[1:]:
        raise unsupported(node, "with a symbolic row size (the dims after the first)")
    row = 1
    for n in x.shape[1:]:
        row *= n
    send = [_times(b, s, row) for s in input_split_sizes]
    recv = [_times(b, s, row) for s in output_split_sizes]
    operands = [b.int_list(v) for v in (send, _offsets(b, send), recv, _offsets(b, recv))]
    names = ("send_counts", "send_displacements", "recv_counts", "recv_displacements")
    return b.one("HcomAllToAllV", [("send_data", x), *zip(names, operands)], dtype, shape, {"group": group_name})


def _times(b: Builder, size: Any, row: int) -> Any:
    if not isinstance(size, Value):
        return int(size) * row
    return b.one("Mul", [("x1", b.cast(size, torch.int64)), ("x2", b.const(row, torch.int64))], torch.int64, ())


def _offsets(b: Builder, counts: list[Any]) -> list[Any]:
    """0, c0, c0 + c1, ...: Python ints while the counts are known, ``Add`` ops from the first symbolic one."""
    found: list[Any] = []
    total: Any = 0
    for count in counts:
        found.append(total)
        if isinstance(total, Value) or isinstance(count, Value):
            total = b.one("Add", [("x1", b.promote(total, torch.int64)), ("x2", b.promote(count, torch.int64))],
                          torch.int64, ())
        else:
            total += count
    return found


def wait_tensor(b: Builder, node: Any, x: Value) -> Value:
    """``_c10d_functional.wait_tensor`` -> ``Identity`` (c10d_functional.py:98-104)."""
    dtype, shape = out(node)
    return b.one("Identity", [("x", x)], dtype, shape)


TABLE: dict[Any, Callable[..., Any]] = {
    _c10d.all_reduce.default: all_reduce,
    _c10d.all_gather_into_tensor.default: all_gather_into_tensor,
    _c10d.reduce_scatter_tensor.default: reduce_scatter_tensor,
    _c10d.all_to_all_single.default: all_to_all_single,
    _c10d.wait_tensor.default: wait_tensor,
}
