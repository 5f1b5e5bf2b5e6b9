"""``dynamo_export``: paths, checks and writes around capture (capture.py), lowering to GE ops (ge_build.py)
and weight placement (weights.py)."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any

import torch

from ge_executor import ge_ir

from . import atc_config, capture, ge_build, ge_options, pbtxt, weights
from .outputs import write_all

logger = logging.getLogger("torchair_ref")

PBTXT = "dynamo.pbtxt"


@dataclass(frozen=True)
class ExportLayout:
    """EX-3/EX-4: where one process's export goes."""

    root: str  # export_path
    air: str  # the .air file
    rank_dir: str  # holds dynamo.pbtxt, options.json and the weight files

    @property
    def pbtxt(self) -> str:
        return os.path.join(self.rank_dir, PBTXT)

    @property
    def options_json(self) -> str:
        return os.path.join(self.rank_dir, ge_options.OPTIONS_JSON)


def export_layout(export_path: str, export_name: str, rank: int | None) -> ExportLayout:
    """EX-3/EX-4: the layout for a single process (``rank`` None) or for one rank of an initialised process group."""
    root = os.path.normpath(export_path)
    if rank is None:
        return ExportLayout(root, os.path.join(root, f"{export_name}.air"), root)
    return ExportLayout(root, os.path.join(root, f"{export_name}{rank}.air"), os.path.join(root, f"rank_{rank}"))


def export_name_component(export_name: str) -> str:
    """EX-1: only the last path component of ``export_name`` is used."""
    if not isinstance(export_name, str):
        raise TypeError(f"export_name must be a str, got {type(export_name).__name__} {export_name!r}")
    name = os.path.basename(os.path.normpath(export_name)) if export_name else ""
    if name in ("", ".", ".."):
        raise ValueError(
            f"export_name {export_name!r} has no usable last path component; pass a file name such as 'export'"
        )
    return name


def _distributed() -> tuple[int | None, int]:
    """(rank, world size) of an initialised default process group, else (None, 1)."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return None, 1


def _refused(paths: list[str]) -> bool:
    """EX-2: True (after one ERROR line) when one of the paths is a symlink, which the export never writes through."""
    link = next((p for p in paths if os.path.islink(p)), None)
    if link is not None:
        logger.error("dynamo_export: %s is a symlink; refusing to write through it, nothing was exported", link)
    return link is not None


def _flag(config: Any, path: str) -> bool:
    obj = config
    for part in path.split("."):
        obj = getattr(obj, part)
    return bool(obj)


def dynamo_export(
    *args: Any,
    model: torch.nn.Module,
    export_path: str | os.PathLike[str] = "export_file",
    export_name: str = "export",
    dynamic: bool = False,
    config: Any = None,
    **kwargs: Any,
) -> None:
    """EX-1..EX-10: trace ``model(*args, **kwargs)`` whole with Dynamo and write it as a GE IR ``.air`` file."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}; pass dynamo_export(x, model=m)")
    if not isinstance(export_path, (str, os.PathLike)):
        raise TypeError(f"export_path must be a str or os.PathLike, got {type(export_path).__name__} {export_path!r}")
    if not isinstance(dynamic, bool):
        raise TypeError(f"dynamic must be a bool, got {type(dynamic).__name__} {dynamic!r}")
    name = export_name_component(export_name)
    from torchair_ref.config import CompilerConfig

    if config is None:
        config = CompilerConfig()
    if not isinstance(config, CompilerConfig):
        raise TypeError(f"config must be a CompilerConfig, got {type(config).__name__} {config!r}")
    rank, world_size = _distributed()
    layout = export_layout(os.fspath(export_path), name, rank)
    if _refused([layout.root, layout.air]):
        return None
    existing = layout.root
    while not os.path.lexists(existing) and os.path.dirname(existing) != existing:
        existing = os.path.dirname(existing) or "."
    if not os.path.isdir(existing):
        where = "is an existing file" if existing == layout.root else f"is below {existing!r}, an existing file"
        raise NotADirectoryError(f"export_path {layout.root!r} {where}; pass a directory (it is created when missing)")

    captured = capture.capture(model, args, kwargs, dynamic=dynamic)
    graph_def, op_names = ge_build.build_graph(
        captured, record_module_stack=_flag(config, "export.experimental.enable_record_nn_module_stack")
    )
    model_def = ge_ir.ModelDef(name=name)
    model_def.graph.extend([graph_def])
    main = model_def.graph[0]
    inputs = list(zip(captured.inputs, op_names))
    constants = [weights.Weight(op, i.name, i.value) for i, op in inputs if i.role == capture.CONSTANT]
    model_weights = [weights.Weight(op, i.name, i.value) for i, op in inputs if i.role == capture.WEIGHT]
    weights.inline_constants(main, constants)
    graph_bytes, threshold = model_def.ByteSize(), weights.current_threshold()
    files = weights.place_weights(main, model_weights, layout.rank_dir, graph_bytes=graph_bytes, threshold=threshold)
    logger.info(
        "dynamo_export: graph %d bytes + %d weights of %d bytes %s threshold %d: weights %s",
        graph_bytes,
        len(model_weights),
        sum(w.nbytes for w in model_weights),
        ">" if files else "<=",
        threshold,
        "in files" if files else "inline",
    )
    weights.reindex_data(main)

    local, global_ = ge_options.ge_options(
        *config.as_dict(), deterministic=torch.are_deterministic_algorithms_enabled()
    )
    outputs = [
        (layout.air, model_def.SerializeToString()),
        (layout.pbtxt, pbtxt.to_pbtxt(main).encode()),
        (layout.options_json, ge_options.render(ge_options.options_document(local, global_))),
    ]
    groups = capture.process_groups(captured.gm)
    if rank == 0 and groups and _flag(config, "export.experimental.auto_atc_config_generated"):
        outputs += _atc_outputs(layout.root, name, world_size, atc_config.group_ranks(groups))
    if _refused([layout.rank_dir, *(p for p, _ in outputs), *(p for p, _ in files)]):
        return None

    os.makedirs(layout.rank_dir, exist_ok=True)
    air, *others = outputs
    write_all([*weights.weight_file_outputs(files), *others, air])
    logger.info("dynamo_export: wrote %s", layout.air)
    return None


def _atc_outputs(root: str, name: str, world_size: int, groups: dict[str, list[int]]) -> list[tuple[str, bytes]]:
    relation = atc_config.model_relation_config(name, world_size, groups)
    return [
        (os.path.join(root, atc_config.MODEL_RELATION_CONFIG), atc_config.render(relation)),
        (os.path.join(root, atc_config.NUMA_CONFIG), atc_config.render(atc_config.numa_config(world_size))),
    ]
