"""EX-4, EX-11: the executor's collective kernels (kernels/collective.py) outside a process group (the gloo runs
are the multi-rank export tests, tests/reference/test_export_multirank.py)."""

from __future__ import annotations

import pytest
import torch

from ge_executor import GeExecutorError
from tests.ge_executor.graphs import run_op

X = torch.tensor([[-2.0, -0.5, 0.0], [0.5, 1.0, 3.0]])


def test_hcom_all_reduce_needs_a_process_group():
    with pytest.raises(GeExecutorError, match="torch.distributed"):
        run_op("HcomAllReduce", [X], reduction=b"sum", group=b"0")
