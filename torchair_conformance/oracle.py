"""The suite's own statement of the cache path formula (SPEC CC-8, CC-9, CF-3), as pure functions.

The suite never asks the implementation where its cache is: it computes the path from the values it chose and
checks that the file appears there and nowhere else.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Mapping, Sequence

__all__ = ["CACHE_HOME_ENV", "FILE_NAME", "options_string", "root_for", "tags_for", "deterministic_level",
           "model_info", "dist_level", "cache_file"]

CACHE_HOME_ENV = "TORCHAIR_CACHE_HOME"
FILE_NAME = "compiled_module"


def options_string(as_dict: tuple[Mapping[str, str], Mapping[str, str]]) -> str:
    """CF-3: ``",".join(f"{k}={v}")`` over the global options updated with the local ones."""
    local, global_ = as_dict
    merged = dict(global_)
    merged.update(local)
    return ",".join(f"{k}={v}" for k, v in merged.items())


def root_for(cache_dir: str | None, env_home: str | None, cwd: str) -> str:
    """CC-8: ``cache_dir`` if truthy, else ``$TORCHAIR_CACHE_HOME`` if set, else ``<cwd>/.torchair_cache``."""
    root = cache_dir or env_home or os.path.join(cwd, ".torchair_cache")
    return os.path.join(cwd, root)


def tags_for(mode: str, ge_cache: bool) -> Sequence[str]:
    """CC-9: ``aclgraphcache`` iff reduce-overhead; ``gecache`` iff max-autotune with ``ge_cache``."""
    if mode == "reduce-overhead":
        return ["aclgraphcache"]
    return ["gecache"] if ge_cache else []


def deterministic_level() -> int:
    """CC-8: ``torch_npu.npu._get_deterministic_level()`` when ``torch_npu`` is already imported in this process
    (it is never imported here), else 0."""
    torch_npu = sys.modules.get("torch_npu")
    return 0 if torch_npu is None else int(torch_npu.npu._get_deterministic_level())


def model_info(class_name: str, module_str: str, options: str, dynamic: bool, tags: Sequence[str],
               level: int) -> str:
    """CC-8: ``ClassName_dynamic|static[_tags]_md5(str(module) + options_string + "|npu_deterministic_level=L")``
    with ``L`` the deterministic level (``deterministic_level()`` in the process that compiles)."""
    digest = hashlib.md5(f"{module_str}{options}|npu_deterministic_level={level}".encode()).hexdigest()
    return "_".join([class_name, "dynamic" if dynamic else "static", *tags, digest])


def dist_level(world_size: int, rank: int, global_rank: int | None, tp_rank: int | None,
               pp_rank: int | None) -> str:
    """CC-8: ``world{W}global_rank{R}`` when W > 1, then ``tp_rank{t}``, then ``pp_rank{p}``, joined by ``_``."""
    parts = []
    if world_size > 1:
        parts.append(f"world{world_size}global_rank{rank if global_rank is None else global_rank}")
    if tp_rank is not None:
        parts.append(f"tp_rank{tp_rank}")
    if pp_rank is not None:
        parts.append(f"pp_rank{pp_rank}")
    return "_".join(parts)


def cache_file(root: str, info: str, dist: str, func_name: str) -> str:
    """CC-8: ``realpath(<root>/<model_info>/<dist>/<func>/compiled_module)`` (an empty ``<dist>`` is no level)."""
    parts = [root, info] + ([dist] if dist else []) + [func_name, FILE_NAME]
    return os.path.realpath(os.path.join(*parts))
