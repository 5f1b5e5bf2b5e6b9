"""EX-11, IMPL-4: GE kernels that select elements: ``Gather``, ``GatherV2``, ``GatherElements``, ``IndexByTensor``,
``StridedSliceV2``, ``MaskedFill``, ``SelectV2``; and that write them: ``TensorScatterUpdate``, ``TensorScatterAdd``."""

from __future__ import annotations

import torch

from ge_executor.registry import BASIC, METADEF, RAW_OPS, OpView, input_ints, kernel, required


def _gather(x: torch.Tensor, indices: torch.Tensor, axis: int, op: OpView) -> torch.Tensor:
    """x's slices at ``indices`` along ``axis``: shape x[:axis] + indices.shape + x[axis+1:]. With attr
    ``negative_index_support`` (REG_OP default false) an index in [-size, 0) counts from the end, as upstream's
    ``select`` converter asks for (``x[:, -1]``, ge_converter/aten/select.py:20); without it, or beyond -size, an
    index out of [0, size) is an error."""
    if x.dim() == 0:
        raise op.fail("cannot gather from a 0-d tensor")
    axis = axis + x.dim() if axis < 0 else axis
    if not 0 <= axis < x.dim():
        raise op.fail(f"axis {axis} is out of range for a {x.dim()}-d input")
    size = x.shape[axis]
    index = indices.long()
    low = -size if op.b("negative_index_support", False) else 0
    if index.numel() and (int(index.min()) < low or int(index.max()) >= size):
        raise op.fail(f"indices {index.tolist()} are out of range [{low}, {size}) on axis {axis}")
    index = torch.where(index < 0, index + size, index)
    picked = torch.index_select(x, axis, index.reshape(-1))
    return picked.reshape(tuple(x.shape[:axis]) + tuple(indices.shape) + tuple(x.shape[axis + 1:]))


@kernel("Gather", dtypes=BASIC | {"DT_BOOL"}, source=f"{RAW_OPS}:77857 REG_OP(Gather), BasicType() ({METADEF})")
def gather(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x[indices] along axis 0 (``batch_dims`` 0 only; ``negative_index_support`` as GatherV2)."""
    if op.i("batch_dims", 0) != 0:
        raise op.fail(f"batch_dims={op.i('batch_dims', 0)} is not supported (only 0)")
    return _gather(required(op, inputs, 0), required(op, inputs, 1), 0, op)


@kernel("GatherV2", dtypes=BASIC | {"DT_BOOL"}, source=f"{RAW_OPS}:76148 REG_OP(GatherV2), BasicType() ({METADEF})")
def gather_v2(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x[..., indices, ...] along the ``axis`` input (``batch_dims`` 0 only; attr ``negative_index_support``)."""
    if op.i("batch_dims", 0) != 0:
        raise op.fail(f"batch_dims={op.i('batch_dims', 0)} is not supported (only 0)")
    (axis,) = input_ints(inputs[2], op, "axis")
    return _gather(required(op, inputs, 0), required(op, inputs, 1), axis, op)


@kernel("StridedSliceV2", dtypes=BASIC, source=f"{RAW_OPS}:79460 REG_OP(StridedSliceV2)")
def strided_slice_v2(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x[begin:end:strides] along ``axes`` (0-d or 1-d operands; ends past the dim are clamped, as GE does)."""
    x = required(op, inputs, 0)
    begin, end = (required(op, inputs, k).reshape(-1).tolist() for k in (1, 2))
    axes_in, strides_in = inputs[3], inputs[4]
    axes = axes_in.reshape(-1).tolist() if axes_in is not None else list(range(len(begin)))
    strides = strides_in.reshape(-1).tolist() if strides_in is not None else [1] * len(begin)
    if any(op.i(mask, 0) for mask in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")):
        raise op.fail("masks are not supported here")
    index = [slice(None)] * x.dim()
    for b, e, axis, step in zip(begin, end, axes, strides):
        if step <= 0:
            raise op.fail(f"stride {step} along axis {axis}: only positive strides are supported here")
        index[int(axis)] = slice(int(b), int(e), int(step))
    return x[tuple(index)].contiguous()


@kernel("MaskedFill", dtypes={"DT_FLOAT", "DT_BF16", "DT_FLOAT16", "DT_INT8", "DT_INT32", "DT_INT64"},
        source=f"{RAW_OPS}:79279 REG_OP(MaskedFill)")
def masked_fill(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x where mask is false, value (cast to x's dtype) where it is true; mask and value broadcast against x."""
    x, mask, value = required(op, inputs, 0), required(op, inputs, 1), required(op, inputs, 2)
    if mask.dtype != torch.bool:
        raise op.fail(f"mask must be bool, got {mask.dtype}")
    out = torch.where(mask, value.to(x.dtype), x)
    if out.shape != x.shape:
        raise op.fail(f"mask {list(mask.shape)} does not broadcast to x {list(x.shape)}")
    return out


@kernel("GatherElements", dtypes={"DT_FLOAT16", "DT_BF16", "DT_FLOAT", "DT_INT8", "DT_INT16", "DT_INT32", "DT_INT64",
                                  "DT_UINT8", "DT_UINT16", "DT_UINT32", "DT_UINT64", "DT_BOOL"},
        source=f"{RAW_OPS}:76238 REG_OP(GatherElements) (index: DT_INT32, DT_INT64)")
def gather_elements(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """y[i][j][k] = x[index[i][j][k]][j][k] along attr ``dim`` (default 0), as torch.gather: y has index's shape,
    which may be smaller than x's off ``dim``; an index outside [-size, size) of ``dim`` is an error."""
    x, index = required(op, inputs, 0), required(op, inputs, 1)
    if index.dtype not in (torch.int32, torch.int64):
        raise op.fail(f"index must be int32 or int64, got {index.dtype}")
    dim = op.i("dim", 0)
    if x.dim() != index.dim() or not -max(x.dim(), 1) <= dim < max(x.dim(), 1):
        raise op.fail(f"dim {dim} with x {list(x.shape)} and index {list(index.shape)}")
    size = x.shape[dim] if x.dim() else 1
    if index.numel() and (int(index.min()) < -size or int(index.max()) >= size):
        raise op.fail(f"index values {int(index.min())}..{int(index.max())} are out of range for size {size}")
    return torch.gather(x, dim, torch.where(index < 0, index + size, index).long())


@kernel("IndexByTensor", dtypes=BASIC,
        source=f"{RAW_OPS}:17206 REG_OP(IndexByTensor), BasicType() ({METADEF}) (indices: DT_INT64)")
def index_by_tensor(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x indexed as ``aten.index`` indexes it: attr ``indices_mask`` has one entry per leading dim of x, 1 where
    the next int64 ``indices`` tensor selects along that dim and 0 where the dim is kept whole; the index tensors
    broadcast together (indices in [-size, size), negative ones from the end)."""
    x, indices = required(op, inputs, 0), [t for t in inputs[1:] if t is not None]
    mask = op.ints("indices_mask", [])
    if sum(1 for m in mask if m) != len(indices) or len(mask) > x.dim():
        raise op.fail(f"indices_mask {mask} does not fit {len(indices)} index tensors and a {x.dim()}-d x")
    key: list[slice | torch.Tensor] = []
    picked = iter(indices)
    for dim, m in enumerate(mask):
        if not m:
            key.append(slice(None))
            continue
        index = next(picked)
        if index.dtype != torch.int64:
            raise op.fail(f"indices must be int64 (their REG_OP type), got {index.dtype}")
        size = x.shape[dim]
        if index.numel() and (int(index.min()) < -size or int(index.max()) >= size):
            raise op.fail(f"indices {int(index.min())}..{int(index.max())} are out of range for dim {dim} of "
                          f"size {size}")
        key.append(index)
    return x[tuple(key)].contiguous()


@kernel("SelectV2", dtypes=BASIC, checked=1, same_dtype=((1, 2),),
        source=f"{RAW_OPS}:76895 REG_OP(SelectV2), then/else BasicType() ({METADEF}), one dtype (result's)")
def select_v2(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """then where condition is true, else where false; the three broadcast together (condition bool)."""
    condition, then, other = required(op, inputs, 0), required(op, inputs, 1), required(op, inputs, 2)
    if condition.dtype != torch.bool:
        raise op.fail(f"condition must be bool, got {condition.dtype}")
    return torch.where(condition, then, other)


def _scatter(op: OpView, inputs: list[torch.Tensor | None], accumulate: bool) -> torch.Tensor:
    """A copy of x with ``updates`` written (or added) at ``indices``: indices' last axis holds K coordinates into x's
    first K dims, updates has shape indices.shape[:-1] + x.shape[K:]. A coordinate outside [0, size) is refused (CANN
    documents no write for it); with equal coordinates, which update wins is unspecified (this kernel: torch's)."""
    x, indices, updates = required(op, inputs, 0), required(op, inputs, 1), required(op, inputs, 2)
    if indices.dtype not in (torch.int32, torch.int64) or indices.dim() < 1:
        raise op.fail(f"indices must be an int32 or int64 tensor of rank >= 1, got {indices.dtype} "
                      f"{list(indices.shape)}")
    k = indices.shape[-1]
    want = (*indices.shape[:-1], *x.shape[k:])
    if k > x.dim() or tuple(updates.shape) != want or updates.dtype != x.dtype:
        raise op.fail(f"x {list(x.shape)} {x.dtype}, indices {list(indices.shape)}: updates must be {list(want)} "
                      f"{x.dtype}, got {list(updates.shape)} {updates.dtype}")
    coords = indices.reshape(-1, k).long()
    for d in range(k):
        if coords.numel() and (int(coords[:, d].min()) < 0 or int(coords[:, d].max()) >= x.shape[d]):
            raise op.fail(f"indices {int(coords[:, d].min())}..{int(coords[:, d].max())} are out of range "
                          f"[0, {x.shape[d]}) for dim {d}")
    y = x.clone()
    y.index_put_(tuple(coords[:, d] for d in range(k)), updates.reshape(-1, *x.shape[k:]), accumulate=accumulate)
    return y


@kernel("TensorScatterUpdate", dtypes=BASIC | {"DT_BOOL"}, same_dtype=((0, 2),),
        source=f"{RAW_OPS}:39045 REG_OP(TensorScatterUpdate), BasicType() and bool ({METADEF}; string has no torch "
               "dtype); indices IndexNumberType()")
def tensor_scatter_update(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x with ``updates`` written at ``indices`` (``_scatter``)."""
    return _scatter(op, inputs, False)


@kernel("TensorScatterAdd", dtypes={"DT_FLOAT16", "DT_FLOAT", "DT_INT32", "DT_INT8", "DT_UINT8"}, same_dtype=((0, 2),),
        source=f"{RAW_OPS}:39449 REG_OP(TensorScatterAdd); indices IndexNumberType()")
def tensor_scatter_add(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x with ``updates`` added at ``indices``, equal coordinates adding up (``_scatter``)."""
    return _scatter(op, inputs, True)
