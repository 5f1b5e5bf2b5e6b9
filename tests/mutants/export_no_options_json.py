"""The export leaves no options.json (the layout of upstream before it wrote one), which EX-4 forbids too."""

import contextlib
import os

import torch.distributed as dist

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("EX-3",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def dynamo_export(*args, model, export_path="export_file", export_name="export", **kwargs):
    _ref.dynamo_export(*args, model=model, export_path=export_path, export_name=export_name, **kwargs)
    if os.path.islink(export_path):  # EX-2: the reference wrote nothing there; neither does the mutant
        return None
    rank = dist.get_rank() if dist.is_available() and dist.is_initialized() else None
    rank_dir = export_path if rank is None else os.path.join(export_path, f"rank_{rank}")
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        os.unlink(os.path.join(rank_dir, "options.json"))
    return None
