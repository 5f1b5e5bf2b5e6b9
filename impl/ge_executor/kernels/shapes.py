"""EX-11, IMPL-4: GE kernels that move or reshape data: reshape, transpose, broadcast, concat, split, pack, unpack,
strided views, triangles, shape, range and copies. Shape arithmetic with symbolic (-1) sizes is computed at run time
through Shape -> Gather -> Pack -> Reshape, so these kernels read shapes from their input tensors."""

from __future__ import annotations

import torch

from ge_executor.registry import ALL, BASIC, INDEX, METADEF, RAW_OPS, OpView, input_ints, kernel, required

_DYNAMIC = "torch_npu-2.14.0 torchair/_ge_concrete_graph/dynamic_output_ops.py"
_SHAPE_TYPES = ALL - {"DT_COMPLEX64", "DT_COMPLEX128", "DT_BF16"}  # Shape/Identity REG_OP list (no complex, no bf16)


@kernel("Transpose", dtypes=BASIC | {"DT_BOOL"},
        source=f"{RAW_OPS}:86029 REG_OP(Transpose), BasicType() ({METADEF}); bool per the aten converter")
def transpose(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """Permute x's dims by the ``perm`` input tensor."""
    return required(op, inputs, 0).permute(input_ints(inputs[1], op, "perm")).contiguous()


@kernel("Reshape", dtypes=ALL, source=f"{RAW_OPS}:1571 REG_OP(Reshape), TensorType::ALL() ({METADEF})")
def reshape(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x with the ``shape`` input tensor's shape; one -1 is inferred. Only the whole-shape form (axis 0,
    num_axes -1) is what the converters emit; another form is refused rather than guessed."""
    if op.i("axis", 0) != 0 or op.i("num_axes", -1) != -1:
        raise op.fail(f"axis={op.i('axis', 0)}, num_axes={op.i('num_axes', -1)}: only axis=0, num_axes=-1 is supported")
    shape = input_ints(inputs[1], op, "shape")
    x = required(op, inputs, 0)
    try:
        return x.reshape(shape).contiguous()
    except RuntimeError as exc:
        raise op.fail(f"cannot reshape {list(x.shape)} to {shape}: {exc}") from exc


@kernel("Shape", dtypes=_SHAPE_TYPES | {"DT_BF16"},
        source=f"{RAW_OPS}:1943 REG_OP(Shape); bf16 per CANN's array_ops.h REG_OP(Shape) TensorType::ALL()")
def shape(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x's shape as a 1-d tensor of ``dtype`` (an Int attr in GE's C++ numbering, default 3 = DT_INT32)."""
    return torch.tensor(list(required(op, inputs, 0).shape), dtype=op.dt("dtype", 3))


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
    bounds = inputs[:3]
    start, limit, delta = (required(op, bounds, k).item() for k in range(len(bounds)))
    if delta == 0:
        raise op.fail("delta is 0")
    return torch.arange(start, limit, delta, dtype=required(op, inputs, 0).dtype)


@kernel("Identity", dtypes=_SHAPE_TYPES | {"DT_BF16"}, source=f"{RAW_OPS}:1350 REG_OP(Identity) (bf16 as Cast)")
def identity(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """A copy of x (GE gives the output its own buffer)."""
    return required(op, inputs, 0).clone()


@kernel("TensorMove", dtypes={"DT_FLOAT16", "DT_FLOAT", "DT_INT32", "DT_UINT32", "DT_INT8", "DT_UINT8", "DT_UINT64",
                              "DT_INT64", "DT_BOOL"}, source=f"{RAW_OPS}:15649 REG_OP(TensorMove)")
def tensor_move(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    return required(op, inputs, 0).clone()


@kernel("SplitV", dtypes=BASIC | {"DT_BOOL"}, source=f"{_DYNAMIC}:1053 REG_OP(SplitV), BasicType() ({METADEF})")
def split_v(op: OpView, inputs: list[torch.Tensor | None]) -> tuple[torch.Tensor, ...]:
    """``num_split`` pieces of x along ``split_dim`` with sizes ``size_splits`` (one -1 takes the rest)."""
    x = required(op, inputs, 0)
    sizes = input_ints(inputs[1], op, "size_splits")
    (dim,) = input_ints(inputs[2], op, "split_dim")
    if sizes.count(-1) == 1:
        sizes[sizes.index(-1)] = x.shape[dim] - sum(s for s in sizes if s != -1)
    if len(sizes) != op.i("num_split") or sum(sizes) != x.shape[dim] or min(sizes) < 0:
        raise op.fail(f"size_splits {sizes} (num_split={op.i('num_split')}) do not split dim {dim} of size "
                      f"{x.shape[dim]}")
    return tuple(piece.contiguous() for piece in torch.split(x, sizes, dim=dim))


@kernel("BroadcastTo", dtypes=ALL, source=f"{RAW_OPS}:64912 REG_OP(BroadcastTo)")
def broadcast_to(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    shape = [int(d) for d in required(op, inputs, 1).reshape(-1).tolist()]
    x = required(op, inputs, 0)
    try:
        return torch.broadcast_to(x, shape).contiguous()
    except RuntimeError as exc:
        raise op.fail(f"cannot broadcast {list(x.shape)} to {shape}: {exc}") from exc


@kernel("ConcatV2", dtypes=ALL, source=f"{RAW_OPS}:82697 REG_OP(ConcatV2)")
def concat_v2(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """The dynamic inputs x0..x(N-1) joined along the last input, ``concat_dim``."""
    count, dim = len(inputs) - 1, int(required(op, inputs, len(inputs) - 1).reshape(-1)[0])
    if count != op.i("N", 1):
        raise op.fail(f"attr N is {op.i('N', 1)} but {count} tensors are given")
    return torch.cat([required(op, inputs, k) for k in range(count)], dim=dim)


@kernel("Unsqueeze", dtypes=ALL, source=f"{RAW_OPS}:1459 REG_OP(Unsqueeze)")
def unsqueeze(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x with a size-1 dim inserted at each of attr ``axes`` (negative ones counted from the result's rank)."""
    x = required(op, inputs, 0)
    axes = op.ints("axes", [])
    rank = x.dim() + len(axes)
    for axis in sorted(a % rank for a in axes):
        x = x.unsqueeze(axis)
    return x.clone()


@kernel("Squeeze", dtypes=ALL, source=f"{RAW_OPS}:1611 REG_OP(Squeeze), TensorType::ALL() ({METADEF})")
def squeeze(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x without the size-1 dims listed in attr ``axis`` (negative ones counted from the end); an empty ``axis``
    (the default) removes every size-1 dim. A listed dim whose size is not 1 is an error, as CANN documents for
    Squeeze ("it is an error to squeeze a dimension that is not 1"), never a silent no-op as torch's squeeze is."""
    x = required(op, inputs, 0)
    axes = op.ints("axis", [])
    if not axes:
        return x.reshape([n for n in x.shape if n != 1])
    picked = set()
    for axis in axes:
        if not -x.dim() <= axis < max(x.dim(), 1):
            raise op.fail(f"axis {axis} is out of range for a {x.dim()}-d input")
        picked.add(axis % x.dim() if x.dim() else 0)
    wrong = [a for a in sorted(picked) if x.dim() and x.shape[a] != 1]
    if wrong:
        raise op.fail(f"cannot squeeze dims {wrong} of shape {list(x.shape)}: their size is not 1")
    return x.reshape([n for k, n in enumerate(x.shape) if k not in picked])


@kernel("Fill", dtypes=ALL, checked=1, source=f"{RAW_OPS}:64837 REG_OP(Fill) (value: TensorType listing every type)")
def fill(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """A tensor of shape ``dims`` (1-d int input) holding the 0-d input ``value`` everywhere, in value's dtype."""
    dims = input_ints(inputs[0], op, "dims")
    value = inputs[1]
    if value is None or value.numel() != 1:
        raise op.fail(f"value must hold one element, got {None if value is None else list(value.shape)}")
    if any(d < 0 for d in dims):
        raise op.fail(f"dims {dims} has a negative size")
    return torch.full(dims, value.reshape(()).item(), dtype=value.dtype)


@kernel("Unpack", dtypes=BASIC, source=f"{_DYNAMIC}:1134 REG_OP(Unpack), BasicType() ({METADEF})")
def unpack(op: OpView, inputs: list[torch.Tensor | None]) -> tuple[torch.Tensor, ...]:
    """The ``num`` slices of x along attr ``axis`` (default 0), that dim removed; ``num`` must be its size."""
    x, axis = required(op, inputs, 0), op.i("axis", 0)
    if not -x.dim() <= axis < x.dim() or x.shape[axis] != op.i("num"):
        raise op.fail(f"num={op.i('num')} slices along axis {axis} of shape {list(x.shape)}")
    return tuple(piece.contiguous() for piece in torch.unbind(x, dim=axis))


@kernel("AsStrided", dtypes=BASIC, source=f"{RAW_OPS}:87194 REG_OP(AsStrided), BasicType() ({METADEF}) (size, "
                                          "stride, storage_offset: IndexNumberType())")
def as_strided(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """A ``size`` tensor whose element at index i is x's element number storage_offset + sum(i[k] * stride[k]) in
    row-major order (x is dense in GE); an element beyond x's is an error."""
    x = required(op, inputs, 0)
    size, stride = input_ints(inputs[1], op, "size"), input_ints(inputs[2], op, "stride")
    (offset,) = input_ints(inputs[3], op, "storage_offset")
    if len(size) != len(stride) or min([offset, *size, *stride], default=0) < 0:
        raise op.fail(f"size {size}, stride {stride}, storage_offset {offset}")
    last = offset + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else offset - 1
    if last >= x.numel():
        raise op.fail(f"size {size}, stride {stride} from offset {offset} reach element {last} of {x.numel()}")
    return torch.as_strided(x.contiguous().reshape(-1), size, stride, offset).contiguous()


@kernel("Tril", dtypes=BASIC, source=f"{RAW_OPS}:40665 REG_OP(Tril), BasicType() ({METADEF})")
def tril(op: OpView, inputs: list[torch.Tensor | None]) -> torch.Tensor:
    """x with the elements above diagonal ``diagonal`` (attr, default 0; positive: above the main one) of its last
    two dims set to zero."""
    x = required(op, inputs, 0)
    if x.dim() < 2:
        raise op.fail(f"x must be at least 2-d, got shape {list(x.shape)}")
    return torch.tril(x, op.i("diagonal", 0))
