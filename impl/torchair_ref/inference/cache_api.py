"""`cache_compile`: eager validation of its arguments (SPEC CC-1..CC-6); the returned callable is `cached`'s."""
from __future__ import annotations

import logging
import os
import types
import warnings
from collections.abc import Callable
from typing import Any

import torch

from torchair_ref import _torch
from torchair_ref.inference import paths
from torchair_ref.inference.cached import CachedFunction

logger = logging.getLogger("torchair_ref")

_BACKEND_MISMATCH = "config in current backend is different from the config during cache generation."


def cache_compile(
    func: Callable[..., Any],
    *,
    config: Any = None,
    backend: Any = None,
    dynamic: bool = True,
    cache_dir: str | os.PathLike[str] | None = None,
    global_rank: int | None = None,
    tp_rank: int | None = None,
    pp_rank: int | None = None,
    custom_decompositions: dict[Any, Any] | None = None,
    ge_cache: bool = False,
    **kwargs: Any,
) -> CachedFunction:
    """CC-1..CC-6: validate eagerly and return a callable that loads or compiles on its first call."""
    from torchair_ref.config import CompilerConfig

    for name in sorted(kwargs):
        _warn_ignored(name, kwargs[name])
    config = _resolve_config(config, backend, CompilerConfig)
    if not isinstance(func, types.MethodType):
        raise ValueError(f"Only method can be cached now, got {func}")
    if not isinstance(func.__self__, torch.nn.Module):
        raise ValueError(f"Only torch.nn.Module method can be cached now, got {func}")
    _check_bool("dynamic", dynamic)
    _check_bool("ge_cache", ge_cache)
    paths.check_ranks(global_rank=global_rank, tp_rank=tp_rank, pp_rank=pp_rank)
    paths.check_cache_dir(cache_dir)
    if custom_decompositions is not None and not isinstance(custom_decompositions, dict):
        raise TypeError(
            f"custom_decompositions must be a dict as from {_torch.DECOMPOSITIONS_FROM}, got "
            f"{type(custom_decompositions).__name__}"
        )
    if cache_dir and os.path.exists(cache_dir):
        owner = os.stat(cache_dir).st_uid
        if owner != os.geteuid():
            denied = PermissionError(f"{cache_dir} is owned by uid {owner}, the current user is uid {os.geteuid()}")
            raise ValueError(f"Cache dir {cache_dir} must be owned by the current user") from denied
    if cache_dir:
        _check_directory_path(os.fspath(cache_dir))
    if ge_cache and config.mode == "reduce-overhead":
        logger.warning("ge_cache=True has no effect in mode reduce-overhead: only max-autotune keeps compiled kernels")
    return CachedFunction(
        func,
        config=config,
        dynamic=dynamic,
        cache_dir=cache_dir,
        ranks=(global_rank, tp_rank, pp_rank),
        decompositions=custom_decompositions or {},
        ge_cache=ge_cache,
    )


def _warn_ignored(name: str, value: Any) -> None:
    """CC-1: an extra keyword argument is accepted and ignored, as upstream's `**kwargs` are (vLLM-Ascend's TorchAir
    model runner passes `fullgraph=`); a warning, also on the logger, names it."""
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    message = (f"cache_compile() ignores the keyword argument {name}={shown}: it is not an option of cache_compile "
               "(TorchAir accepts and ignores extra keywords; the method is always traced whole, fullgraph=True)")
    warnings.warn(message, UserWarning, stacklevel=3)
    logger.warning(message)


def _resolve_config(config: Any, backend: Any, config_type: type) -> Any:
    """CC-4: the config/backend rule."""
    if config is not None and not isinstance(config, config_type):
        raise TypeError(f"config must be a CompilerConfig, got {type(config).__name__}")
    if backend is None:
        return config if config is not None else config_type()
    backend_config = getattr(backend, "keywords", {}).get("compiler_config") if hasattr(backend, "keywords") else None
    if not isinstance(backend_config, config_type):
        raise ValueError(f"backend must come from get_npu_backend(compiler_config=...), got {backend!r}")
    if config is not None and backend_config != config:
        raise ValueError(_BACKEND_MISMATCH)
    return backend_config


def _check_directory_path(cache_dir: str) -> None:
    """`cache_dir` must be a directory or creatable as one: it, or else its nearest existing parent, is a directory."""
    existing = os.path.abspath(cache_dir)
    while not os.path.lexists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        where = "is not a directory"
        if existing != os.path.abspath(cache_dir):
            where = f"is below {existing}, which is not a directory"
        raise NotADirectoryError(f"cache_dir {cache_dir!r} {where}; pass a directory (it is created when missing)")


def _check_bool(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")
