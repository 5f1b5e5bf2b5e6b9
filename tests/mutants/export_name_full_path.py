"""``export_name``'s directories are kept: "a/net" writes <export_path>/a/net.air."""

import os

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("EX-1",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def dynamo_export(*args, model, export_path="export_file", export_name="export", **kwargs):
    head, tail = os.path.split(os.path.normpath(export_name))
    if head:
        export_path = os.path.join(export_path, head)
    return _ref.dynamo_export(*args, model=model, export_path=export_path, export_name=tail, **kwargs)
