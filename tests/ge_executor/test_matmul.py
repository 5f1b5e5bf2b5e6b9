"""EX-11, IMPL-4: the executor's matrix-product kernels (kernels/matmul.py)."""

from __future__ import annotations

import pytest
import torch

from tests.ge_executor.graphs import run_op

torch.manual_seed(0)
A, B, BIAS = torch.randn(3, 4), torch.randn(5, 4), torch.randn(5)


def test_mat_mul_v2_transpose_and_bias():
    (got,) = run_op("MatMulV2", [A, B, BIAS, None], transpose_x2=True)
    torch.testing.assert_close(got, A @ B.T + BIAS)
    (got,) = run_op("MatMul", [A.T, B.T], transpose_x1=True)
    torch.testing.assert_close(got, A @ B.T)

def test_mat_mul_hand_computed():
    (got,) = run_op("MatMulV2", [torch.tensor([[1.0, 2.0]]), torch.tensor([[3.0], [4.0]]), None, None])
    assert got.tolist() == [[11.0]]

@pytest.mark.parametrize("op_type", ["BatchMatMul", "BatchMatMulV2"])
def test_batch_mat_mul_adj_and_broadcast(op_type):
    x1, x2 = torch.randn(2, 3, 4), torch.randn(5, 4)
    (got,) = run_op(op_type, [x1, x2], adj_x2=True)
    torch.testing.assert_close(got, x1 @ x2.T)


_GMM_NAMES = ["x0", "weight0", "bias0", "scale0", "offset0", "antiquant_scale0", "antiquant_offset0", "group_list",
              "per_token_scale"]
_GMM = {"split_item": 3, "group_type": 0, "dtype": -1}
X6, W3 = torch.randn(6, 4), torch.randn(3, 4, 5)


def _gmm(x, weight, group_list, bias=None, scale=None, **attrs):
    empty = torch.zeros(0)
    inputs = [x, weight, empty if bias is None else bias, empty if scale is None else scale, empty, empty.half(),
              empty.half(), group_list, None]
    return run_op("GroupedMatmul", inputs, in_names=_GMM_NAMES, **{**_GMM, **attrs})[0]


def _per_group(x, weight, ends):
    starts = [0, *ends[:-1]]
    return torch.cat([x[s:e] @ weight[g] for g, (s, e) in enumerate(zip(starts, ends))])


def test_grouped_matmul_multiplies_each_group_of_rows_by_its_weight():
    """dynamic_output_ops.py:29 REG_OP(GroupedMatmul), aclnnGroupedMatmulV4 groupType 0 with one tensor each:
    group_list cumulative (type 0) or counts (type 1), an empty group, transposed weight, bias (g, N)."""
    cumulative = torch.tensor([2, 2, 6])
    torch.testing.assert_close(_gmm(X6, W3, cumulative), _per_group(X6, W3, [2, 2, 6]))
    torch.testing.assert_close(_gmm(X6, W3, torch.tensor([2, 0, 4]), group_list_type=1), _per_group(X6, W3, [2, 2, 6]))
    torch.testing.assert_close(_gmm(X6, W3.transpose(1, 2).contiguous(), cumulative, transpose_weight=True),
                               _per_group(X6, W3, [2, 2, 6]))
    bias = torch.randn(3, 5)
    want = _per_group(X6, W3, [2, 2, 6]) + bias[torch.tensor([0, 0, 2, 2, 2, 2])]
    torch.testing.assert_close(_gmm(X6, W3, cumulative, bias=bias), want)


@pytest.mark.parametrize("group_list,attrs,kwargs,why", [
    (torch.tensor([2, 2, 5]), {}, {}, "accounts for 5 rows"),
    (torch.tensor([3, 2, 6]), {}, {}, "non-decreasing"),
    (torch.tensor([2, 2, 6], dtype=torch.int32), {}, {}, "int64"),
    (torch.tensor([2, 2, 6]), {"group_type": -1}, {}, "group_type=-1"),
    (torch.tensor([2, 2, 6]), {}, {"scale": torch.ones(3, dtype=torch.int64)}, "quantised"),
])
def test_grouped_matmul_refuses_what_it_does_not_define(group_list, attrs, kwargs, why):
    """Every row of x in a group (Atlas A2/A3: group_list's last entry is M), int64 group_list, groups along M, no
    quantisation: the rest is refused, not invented."""
    from ge_executor import GraphCheckError

    with pytest.raises(GraphCheckError, match=why):
        _gmm(X6, W3, group_list, **kwargs, **attrs)
