"""Mutant breaking EX-6: the threshold is applied per weight, not all or nothing: after the reference's export,
every weight file no larger than the threshold is folded back into an inline Const."""

import contextlib
import os

import torch.distributed as dist

import torchair_ref as _ref
from torchair_ref import CompilerConfig, get_npu_backend, inference, logger  # noqa: F401
from torchair_ref.export import DEFAULT_THRESHOLD, externalize_threshold, ge_ir, graph

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


def dynamo_export(*args, model, export_path="export_file", export_name="export", **kwargs):
    _ref.dynamo_export(*args, model=model, export_path=export_path, export_name=export_name, **kwargs)
    rank = dist.get_rank() if dist.is_available() and dist.is_initialized() else None
    name = os.path.basename(os.path.normpath(export_name))
    air = os.path.join(export_path, f"{name}{'' if rank is None else rank}.air")
    rank_dir = export_path if rank is None else os.path.join(export_path, f"rank_{rank}")
    if os.path.islink(export_path) or not os.path.isfile(air):
        return None
    model_def = ge_ir.ModelDef.FromString(open(air, "rb").read())
    for op in model_def.graph[0].op:
        path = op.attr["file_path"].s.decode() if op.type == "FileConstant" else None
        if path and os.path.getsize(path) <= _threshold[0]:
            data = open(path, "rb").read()
            os.remove(path)
            for key in ("shape", "dtype", "file_path", "file_id"):
                del op.attr[key]
            op.type = "Const"
            op.attr["value"].t.desc.CopyFrom(op.output_desc[0])
            op.attr["value"].t.data = data
    open(air, "wb").write(model_def.SerializeToString())
    open(os.path.join(rank_dir, "dynamo.pbtxt"), "w").write(graph.to_pbtxt(model_def.graph[0]))
    return None
