"""The export's dynamo.pbtxt leaves out the dtypes (every ``dtype: DT_...`` line is dropped)."""

import os
import re
from pathlib import Path

import torch.distributed as dist

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("EX-8",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def dynamo_export(*args, model, export_path="export_file", export_name="export", **kwargs):
    _ref.dynamo_export(*args, model=model, export_path=export_path, export_name=export_name, **kwargs)
    rank = dist.get_rank() if dist.is_available() and dist.is_initialized() else None
    pbtxt = Path(export_path, "dynamo.pbtxt") if rank is None else Path(export_path, f"rank_{rank}", "dynamo.pbtxt")
    if not os.path.islink(export_path) and pbtxt.is_file():
        pbtxt.write_text(re.sub(r"(?m)^\s*dtype: DT_\w+\n", "", pbtxt.read_text()))
    return None
