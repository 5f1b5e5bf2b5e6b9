"""A symlinked export_path is followed: the export is written into the link's target."""

import os

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("EX-2",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def dynamo_export(*args, model, export_path="export_file", export_name="export", **kwargs):
    if os.path.islink(export_path):
        export_path = os.path.realpath(export_path)
    return _ref.dynamo_export(*args, model=model, export_path=export_path, export_name=export_name, **kwargs)
