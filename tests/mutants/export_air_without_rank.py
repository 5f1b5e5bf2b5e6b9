"""In a multi-process export each rank's .air loses its rank suffix (<name>.air for all)."""

import os

import torch.distributed as dist

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("EX-4",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def dynamo_export(*args, model, export_path="export_file", export_name="export", **kwargs):
    _ref.dynamo_export(*args, model=model, export_path=export_path, export_name=export_name, **kwargs)
    if not (dist.is_available() and dist.is_initialized()):
        return None
    name = os.path.basename(os.path.normpath(export_name))
    air = os.path.join(export_path, f"{name}{dist.get_rank()}.air")
    if not os.path.islink(export_path) and os.path.isfile(air):
        os.replace(air, os.path.join(export_path, f"{name}.air"))
    return None
