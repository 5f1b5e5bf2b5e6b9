"""The cache path formula (SPEC CC-8..CC-10), as pure functions.

Nothing here touches the file system, the process cwd, the environment or ``torch``: the caller reads those once
at the first call (CC-7) and passes the values in, then applies ``realpath`` and creates directories at the edge.
The path is ``<root>/<model_info>/<dist>/<func>/compiled_module``, each part computed by one function below.
"""

from __future__ import annotations

import hashlib
import os
import sys
import types
from collections.abc import Mapping, Sequence
from typing import Any, overload

from torchair_ref.errors import TorchairRefError

__all__ = [
    "CACHE_HOME_ENV",
    "RankTypeError",
    "UnusableNameError",
    "check_cache_dir",
    "check_ranks",
    "resolve_root",
    "cache_tags",
    "npu_deterministic_level",
    "model_info",
    "dist_level",
    "cache_file",
]

CACHE_HOME_ENV = "TORCHAIR_CACHE_HOME"
_DEFAULT_DIRNAME = ".torchair_cache"
_FILE_NAME = "compiled_module"
_MODES = ("max-autotune", "reduce-overhead")


class RankTypeError(TorchairRefError, TypeError, ValueError):
    """CC-8: a rank that is not an int (a bool included): a `TypeError`, and a `ValueError` as `cache_compile`'s other
    bad arguments are (CC-1..6)."""


class UnusableNameError(TorchairRefError, ValueError):
    """A class, method or other name that cannot be one directory of the cache path (the call then runs uncached)."""


def resolve_root(cache_dir: str | os.PathLike[str] | None, *, env: Mapping[str, str], cwd: str) -> str:
    """CC-8: the cache root: ``cache_dir`` if truthy, else ``$TORCHAIR_CACHE_HOME``, else ``<cwd>/.torchair_cache``.

    The environment variable counts only when set and non-empty. A relative root is taken against ``cwd`` (the
    cwd read at the first call, not the process cwd now); the result is absolute and normalized, not realpath'd.
    """
    if not os.path.isabs(cwd):
        raise ValueError(f"cwd must be an absolute path, got {cwd!r}; pass os.getcwd()")
    if cache_dir:
        root = check_cache_dir(cache_dir)
    elif env.get(CACHE_HOME_ENV):
        root = env[CACHE_HOME_ENV]
    else:
        root = os.path.join(cwd, _DEFAULT_DIRNAME)
    return os.path.normpath(os.path.join(cwd, root))


@overload
def check_cache_dir(cache_dir: None) -> None: ...
@overload
def check_cache_dir(cache_dir: str | os.PathLike[str]) -> str: ...
@overload
def check_cache_dir(cache_dir: object) -> str | None: ...


def check_cache_dir(cache_dir: object) -> str | None:
    """CC-8: ``cache_dir`` as a str path, or None when it is None: the one check of its type (``cache_compile``
    makes it at the boundary, ``resolve_root`` when it resolves)."""
    if cache_dir is None:
        return None
    root = os.fspath(cache_dir) if isinstance(cache_dir, (str, os.PathLike)) else None
    if not isinstance(root, str):
        raise TypeError(f"cache_dir must be a path (str or os.PathLike[str]) or None, got {cache_dir!r} "
                        f"({type(cache_dir).__name__})")
    return root


def check_ranks(**ranks: object) -> None:
    """CC-8: each of ``global_rank``, ``tp_rank``, ``pp_rank`` is None or a non-negative int: the one check of the
    ranks (``cache_compile`` makes it at the boundary, ``dist_level`` when it builds the path)."""
    for name, rank in ranks.items():
        if rank is not None:
            _check_rank(name, rank)


def cache_tags(mode: str, ge_cache: bool) -> list[str]:
    """CC-9: ``["aclgraphcache"]`` for reduce-overhead, ``["gecache"]`` for max-autotune with ``ge_cache``."""
    if mode not in _MODES:
        raise ValueError(f"unknown mode {mode!r}; allowed modes: {', '.join(_MODES)}")
    if mode == "reduce-overhead":
        return ["aclgraphcache"]
    return ["gecache"] if ge_cache else []


def npu_deterministic_level(modules: Mapping[str, object]) -> int:
    """CC-8: ``torch_npu.npu._get_deterministic_level()`` when ``torch_npu`` is among the imported ``modules``
    (pass ``sys.modules``; it is never imported here), else 0."""
    torch_npu = modules.get("torch_npu")
    if torch_npu is None:
        return 0
    level = torch_npu.npu._get_deterministic_level()  # type: ignore[attr-defined]
    if type(level) is not int:
        raise TypeError(f"torch_npu.npu._get_deterministic_level() returned {level!r}, expected an int")
    return level


def model_info(
    class_name: str, module_repr: str, options: str, dynamic: bool, tags: Sequence[str], *, deterministic_level: int
) -> str:
    """CC-8: ``<ClassName>_<dynamic|static>[_<tag>...]_<md5>``, the md5 of
    ``module_repr + options + "|npu_deterministic_level=" + str(deterministic_level)``."""
    _check_component("class_name", class_name)
    key = f"{module_repr}{options}|npu_deterministic_level={deterministic_level}"
    # usedforsecurity=False: the digest is a cache key, and FIPS builds refuse md5 without it.
    digest = hashlib.md5(key.encode(), usedforsecurity=False).hexdigest()
    return "_".join([class_name, "dynamic" if dynamic else "static", *tags, digest])


def dist_level(
    *, world_size: int, process_rank: int, global_rank: int | None, tp_rank: int | None, pp_rank: int | None
) -> str:
    """CC-8: ``world{W}global_rank{R}`` (only when W > 1), ``tp_rank{t}``, ``pp_rank{p}``, joined by ``_``."""
    _check_rank("world_size", world_size)
    if world_size < 1:
        raise ValueError(f"world_size must be >= 1, got {world_size}; pass 1 when torch.distributed is not initialised")
    _check_rank("process_rank", process_rank)
    if process_rank >= world_size:
        raise ValueError(f"process_rank must be < world_size ({world_size}), got {process_rank}")
    check_ranks(global_rank=global_rank, tp_rank=tp_rank, pp_rank=pp_rank)
    parts = []
    if world_size > 1:
        parts.append(f"world{world_size}global_rank{process_rank if global_rank is None else global_rank}")
    if tp_rank is not None:
        parts.append(f"tp_rank{tp_rank}")
    if pp_rank is not None:
        parts.append(f"pp_rank{pp_rank}")
    return "_".join(parts)


def cache_file(root: str, model_info: str, dist: str, func_name: str) -> str:
    """CC-8: ``<root>/<model_info>/<dist>/<func_name>/compiled_module``, ``<dist>`` skipped when empty."""
    _check_component("model_info", model_info)
    if dist:
        _check_component("dist", dist)
    _check_component("func_name", func_name)
    return os.path.join(root, model_info, *([dist] if dist else []), func_name, _FILE_NAME)


def _check_rank(name: str, value: object) -> None:
    # bool is an int subclass: tp_rank=True would silently become "tp_rank1".
    if type(value) is bool or not isinstance(value, int):
        raise RankTypeError(f"{name} must be a non-negative int or None, got {value!r} ({type(value).__name__})")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")


def _check_component(name: str, value: str) -> None:
    """A value used as one directory name: it must not be empty, a separator-bearing path, "." or ".."."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {value!r} ({type(value).__name__})")
    seps = [s for s in (os.sep, os.altsep) if s]
    if value in ("", ".", "..") or any(s in value for s in seps) or "\0" in value:
        raise UnusableNameError(f"{name} {value!r} cannot be used as a directory name: it must be non-empty, not "
                                f"'.' or '..', and contain no path separator or NUL")


def distributed_state() -> tuple[int, int]:
    """(world size, rank) of an initialised torch.distributed, else (1, 0)."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size(), dist.get_rank()
    return 1, 0


def resolve(method: types.MethodType, config: Any, *, dynamic: bool, ge_cache: bool, cache_dir: Any,
            ranks: tuple[int | None, int | None, int | None]) -> tuple[str, str, str]:
    """CC-7/CC-8: `(root, model_info, compiled_module path)` for `method`, reading the cwd, `TORCHAIR_CACHE_HOME` and
    `torch.distributed` now (the edge: the rules are the functions above)."""
    from torchair_ref.config import options_string

    module = method.__self__
    world_size, process_rank = distributed_state()
    global_rank, tp_rank, pp_rank = ranks
    root = resolve_root(cache_dir, env=os.environ, cwd=os.getcwd())
    info = model_info(
        type(module).__name__,
        str(module),
        options_string(config),
        dynamic,
        cache_tags(config.mode, ge_cache),
        deterministic_level=npu_deterministic_level(sys.modules),
    )
    dist = dist_level(
        world_size=world_size, process_rank=process_rank, global_rank=global_rank, tp_rank=tp_rank, pp_rank=pp_rank
    )
    # CC-8's realpath: the root the caller named may be reached through symlinks, but the levels below it are the
    # cache's own, so a symlink there is damage (CC-17) and is never resolved into the path.
    real_root = os.path.realpath(root)
    return real_root, info, cache_file(real_root, info, dist, method.__name__)
