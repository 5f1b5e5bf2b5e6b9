"""Mutant breaking EX-8: dynamo.pbtxt leaves out the dtypes (every ``dtype: DT_...`` line is dropped)."""

import os
import re
from pathlib import Path

import torch.distributed as dist

import torchair_ref as _ref
from torchair_ref import CompilerConfig, get_npu_backend, inference, logger  # noqa: F401

__conformance__ = _ref.__conformance__


def dynamo_export(*args, model, export_path="export_file", export_name="export", **kwargs):
    _ref.dynamo_export(*args, model=model, export_path=export_path, export_name=export_name, **kwargs)
    rank = dist.get_rank() if dist.is_available() and dist.is_initialized() else None
    pbtxt = Path(export_path, "dynamo.pbtxt") if rank is None else Path(export_path, f"rank_{rank}", "dynamo.pbtxt")
    if not os.path.islink(export_path) and pbtxt.is_file():
        pbtxt.write_text(re.sub(r"(?m)^\s*dtype: DT_\w+\n", "", pbtxt.read_text()))
    return None
