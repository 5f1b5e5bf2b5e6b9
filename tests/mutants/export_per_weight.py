"""The threshold is applied per weight, not all or nothing: after the reference's export, every weight file no larger
than the threshold is folded back into an inline Const."""

import contextlib
import os
from pathlib import Path

import torchair_ref as _ref
from tests.mutants._base import reference_for
from tests.mutants._export_files import rewriting_export
from torchair_ref.export import DEFAULT_THRESHOLD, externalize_threshold

BREAKS = ("EX-6",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's

_threshold = [DEFAULT_THRESHOLD]


@contextlib.contextmanager
def set_externalize_threshold(nbytes):
    """The reference's override, remembered so that the export can compare each weight with it."""
    with externalize_threshold(nbytes):
        previous, _threshold[0] = _threshold[0], nbytes
        try:
            yield
        finally:
            _threshold[0] = previous


__conformance__ = {**_ref.__conformance__, "set_externalize_threshold": set_externalize_threshold}


def _inline_small_weights(model_def):
    for op in model_def.graph[0].op:
        path = op.attr["file_path"].s.decode() if op.type == "FileConstant" else None
        if path and os.path.getsize(path) <= _threshold[0]:
            data = Path(path).read_bytes()
            os.remove(path)
            for key in ("shape", "dtype", "file_path", "file_id"):
                del op.attr[key]
            op.type = "Const"
            op.attr["value"].t.desc.CopyFrom(op.output_desc[0])
            op.attr["value"].t.data = data


dynamo_export = rewriting_export(_inline_small_weights)
