"""IMPL-4: GE kernels that move or reshape data: shape arithmetic with symbolic (-1) sizes is computed at run time
through Shape -> Gather -> Pack -> Reshape, so these kernels read shapes from their input tensors."""

from __future__ import annotations

import torch

from torchair_cpu.ge.registry import ALL, BASIC, INDEX, METADEF, RAW_OPS, OpView, kernel

_DYNAMIC = "torch_npu-2.14.0 torchair/_ge_concrete_graph/dynamic_output_ops.py"
_GE_GRAPH = "torch_npu-2.14.0 torchair/ge/_ge_graph.py"
_SHAPE_TYPES = ALL - {"DT_COMPLEX64", "DT_COMPLEX128", "DT_BF16"}  # Shape/Identity REG_OP list (no complex, no bf16)


def ints(tensor: torch.Tensor | None, op: OpView, what: str) -> list[int]:
    """A 0-d or 1-d integer tensor input as a Python list (shapes, perms, sizes)."""
    if tensor is None:
        raise op.fail(f"its {what} input is missing")
    if tensor.is_floating_point() or tensor.dim() > 1:
        raise op.fail(f"its {what} input must be a 0-d or 1-d integer tensor, got {tensor.dtype} {list(tensor.shape)}")
    return [int(v) for v in tensor.reshape(-1).tolist()]


@kernel("Transpose", dtypes=BASIC | {"DT_BOOL"},
        source=f"{RAW_OPS}:86029 REG_OP(Transpose), BasicType() ({METADEF}); bool per the aten converter")
def transpose(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """Permute x's dims by the ``perm`` input tensor."""
    return inputs[0].permute(ints(inputs[1], op, "perm")).contiguous()


@kernel("Reshape", dtypes=ALL, source=f"{RAW_OPS}:1571 REG_OP(Reshape), TensorType::ALL() ({METADEF})")
def reshape(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x with the ``shape`` input tensor's shape; one -1 is inferred. Only the whole-shape form (axis 0,
    num_axes -1) is what the converters emit; another form is refused rather than guessed."""
    if op.i("axis", 0) != 0 or op.i("num_axes", -1) != -1:
        raise op.fail(f"axis={op.i('axis', 0)}, num_axes={op.i('num_axes', -1)}: only axis=0, num_axes=-1 is supported")
    shape = ints(inputs[1], op, "shape")
    try:
        return inputs[0].reshape(shape).contiguous()
    except RuntimeError as exc:
        raise op.fail(f"cannot reshape {list(inputs[0].shape)} to {shape}: {exc}") from exc


@kernel("Shape", dtypes=_SHAPE_TYPES | {"DT_BF16"},
        source=f"{RAW_OPS}:1943 REG_OP(Shape); bf16 per CANN's array_ops.h REG_OP(Shape) TensorType::ALL()")
def shape(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x's shape as a 1-d tensor of ``dtype`` (an Int attr in GE's C++ numbering, default 3 = DT_INT32)."""
    return torch.tensor(list(inputs[0].shape), dtype=op.dt("dtype", 3))


def _gather(x: torch.Tensor, indices: torch.Tensor, axis: int, op: OpView) -> torch.Tensor:
    """x's slices at ``indices`` along ``axis``: shape x[:axis] + indices.shape + x[axis+1:]. Out-of-range indices
    are an error (GE does not wrap negative ones)."""
    if x.dim() == 0:
        raise op.fail("cannot gather from a 0-d tensor")
    axis = axis + x.dim() if axis < 0 else axis
    if not 0 <= axis < x.dim():
        raise op.fail(f"axis {axis} is out of range for a {x.dim()}-d input")
    size = x.shape[axis]
    index = indices.long()
    if index.numel() and (int(index.min()) < 0 or int(index.max()) >= size):
        raise op.fail(f"indices {index.tolist()} are out of range [0, {size}) on axis {axis}")
    picked = torch.index_select(x, axis, index.reshape(-1))
    return picked.reshape(tuple(x.shape[:axis]) + tuple(indices.shape) + tuple(x.shape[axis + 1:]))


@kernel("Gather", dtypes=BASIC | {"DT_BOOL"}, source=f"{RAW_OPS}:77858 REG_OP(Gather), BasicType() ({METADEF})")
def gather(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x[indices] along axis 0 (``batch_dims`` 0 only)."""
    if op.i("batch_dims", 0) != 0:
        raise op.fail(f"batch_dims={op.i('batch_dims', 0)} is not supported (only 0)")
    return _gather(inputs[0], inputs[1], 0, op)


@kernel("GatherV2", dtypes=BASIC | {"DT_BOOL"}, source=f"{RAW_OPS}:76149 REG_OP(GatherV2), BasicType() ({METADEF})")
def gather_v2(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x[..., indices, ...] along the ``axis`` input (``batch_dims`` 0 only)."""
    if op.i("batch_dims", 0) != 0:
        raise op.fail(f"batch_dims={op.i('batch_dims', 0)} is not supported (only 0)")
    (axis,) = ints(inputs[2], op, "axis")
    return _gather(inputs[0], inputs[1], axis, op)


@kernel("Pack", dtypes=ALL, source=f"{RAW_OPS}:82824 REG_OP(Pack)")
def pack(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """Stack the N dynamic inputs along ``axis``."""
    values = [t for t in inputs if t is not None]
    if len(values) != op.i("N", len(values)):
        raise op.fail(f"attr N={op.i('N')} but {len(values)} inputs")
    return torch.stack(values, dim=op.i("axis", 0))


@kernel("Range", dtypes=INDEX | {"DT_FLOAT16", "DT_FLOAT", "DT_DOUBLE", "DT_BF16"},
        source=f"{RAW_OPS}:75939 REG_OP(Range)")
def range_(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """[start, limit) by delta, in start's dtype."""
    start, limit, delta = (t.item() for t in inputs[:3])
    if delta == 0:
        raise op.fail("delta is 0")
    return torch.arange(start, limit, delta, dtype=inputs[0].dtype)


@kernel("Cast", dtypes=ALL, source=f"{_GE_GRAPH}:1609 REG_OP(Cast)")
def cast(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x converted to ``dst_type`` (an Int attr in GE's C++ numbering; floats to integers round toward zero)."""
    return inputs[0].to(op.dt("dst_type"))


@kernel("Identity", dtypes=_SHAPE_TYPES | {"DT_BF16"}, source=f"{RAW_OPS}:1350 REG_OP(Identity) (bf16 as Cast)")
def identity(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """A copy of x (GE gives the output its own buffer)."""
    return inputs[0].clone()


@kernel("SplitV", dtypes=BASIC | {"DT_BOOL"}, source=f"{_DYNAMIC}:1053 REG_OP(SplitV), BasicType() ({METADEF})")
def split_v(op: OpView, inputs: list[torch.Tensor | None]) -> tuple[torch.Tensor, ...]:
    """``num_split`` pieces of x along ``split_dim`` with sizes ``size_splits`` (one -1 takes the rest)."""
    x = inputs[0]
    sizes = ints(inputs[1], op, "size_splits")
    (dim,) = ints(inputs[2], op, "split_dim")
    if sizes.count(-1) == 1:
        sizes[sizes.index(-1)] = x.shape[dim] - sum(s for s in sizes if s != -1)
    if len(sizes) != op.i("num_split") or sum(sizes) != x.shape[dim] or min(sizes) < 0:
        raise op.fail(f"size_splits {sizes} (num_split={op.i('num_split')}) do not split dim {dim} of size "
                      f"{x.shape[dim]}")
    return tuple(piece.contiguous() for piece in torch.split(x, sizes, dim=dim))
