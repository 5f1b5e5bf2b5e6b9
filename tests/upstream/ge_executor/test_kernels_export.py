"""IMPL-4/EX-11: the executor's kernels for the op types exports add (kernels_export.py), each against torch."""

from __future__ import annotations

import pytest
import torch

from tests.upstream.ge_executor.graphs import run_op
from torchair_cpu.ge import GeExecutorError, UnsupportedDtypeError

X = torch.tensor([[-2.0, -0.5, 0.0], [0.5, 1.0, 3.0]])


@pytest.mark.parametrize("approximate", [b"none", b"tanh"])
def test_gelu_v2_follows_its_approximate_attr(approximate):
    (got,) = run_op("GeluV2", [X], approximate=approximate)
    torch.testing.assert_close(got, torch.nn.functional.gelu(X, approximate=approximate.decode()))


def test_gelu_v2_without_the_attr_is_erf_gelu():
    (got,) = run_op("GeluV2", [X])
    torch.testing.assert_close(got, torch.nn.functional.gelu(X))


def test_unary_kernels():
    assert run_op("Neg", [X])[0].tolist() == (-X).tolist()
    torch.testing.assert_close(run_op("Rsqrt", [X.abs() + 1])[0], torch.rsqrt(X.abs() + 1))
    torch.testing.assert_close(run_op("Muls", [X], value=2.5)[0], X * 2.5)
    torch.testing.assert_close(run_op("Pow", [X, torch.tensor(2.0)])[0], X ** 2)
    assert run_op("TensorMove", [X])[0].tolist() == X.tolist()


def test_muls_rejects_bfloat16_as_its_registration_does():
    with pytest.raises(UnsupportedDtypeError, match="Muls"):
        run_op("Muls", [X.bfloat16()], value=2.0)


@pytest.mark.parametrize("keep", [False, True])
def test_reduce_mean(keep):
    (got,) = run_op("ReduceMean", [X, torch.tensor([-1])], keep_dims=keep)
    torch.testing.assert_close(got, X.mean(-1, keepdim=keep))


def test_shape_ops():
    assert run_op("BroadcastTo", [X[:1], torch.tensor([3, 3])])[0].tolist() == X[:1].expand(3, 3).tolist()
    (joined,) = run_op("ConcatV2", [X, X, torch.tensor(-1)], N=2)
    assert joined.tolist() == torch.cat([X, X], -1).tolist()
    assert list(run_op("Unsqueeze", [X], axes=[0, -1])[0].shape) == [1, 2, 3, 1]


def test_strided_slice_v2_clamps_the_end_like_python():
    begin, end, axes, strides = (torch.tensor(v) for v in (1, 2147483647, 1, 1))
    assert run_op("StridedSliceV2", [X, begin, end, axes, strides])[0].tolist() == X[:, 1:].tolist()


def test_hcom_all_reduce_needs_a_process_group():
    with pytest.raises(GeExecutorError, match="torch.distributed"):
        run_op("HcomAllReduce", [X], reduction=b"sum", group=b"0")


def test_greater_broadcasts_to_a_bool_mask():
    rows, cols = torch.arange(3).reshape(3, 1), torch.arange(4).reshape(1, 4)
    (got,) = run_op("Greater", [cols, rows])
    assert got.dtype == torch.bool and got.tolist() == (cols > rows).tolist()


def test_real_and_imag_take_the_parts_of_a_complex_tensor():
    z = torch.complex(X, X * 2)
    (re,) = run_op("Real", [z])
    (im,) = run_op("Imag", [z])
    assert re.dtype == torch.float32 and re.tolist() == X.tolist()
    assert im.dtype == torch.float32 and im.tolist() == (X * 2).tolist()
    (wide,) = run_op("Real", [z.to(torch.complex128)], Tout=11)  # DT_DOUBLE in GE's C++ numbering
    assert wide.dtype == torch.float64 and wide.tolist() == X.tolist()
    with pytest.raises(UnsupportedDtypeError):
        run_op("Real", [X])


@pytest.mark.parametrize("keep", [False, True])
def test_reduce_sum(keep):
    (got,) = run_op("ReduceSum", [X, torch.tensor([-1])], keep_dims=keep)
    assert got.tolist() == X.sum(-1, keepdim=keep).tolist()
    (same,) = run_op("ReduceSum", [X, torch.tensor([], dtype=torch.int64)])
    assert same.tolist() == X.tolist()
