"""Resolving the implementation under test (SPEC IMPL-1..IMPL-3).

The module name comes from one switch: ``--impl`` on the command line, else ``$TORCHAIR_CONFORMANCE_IMPL``, else
``torchair_ref``. ``torch_npu`` is imported first only for ``--impl torchair`` and ``--impl torchair_npu`` (IMPL-3):
with ``torch_npu``
installed and no CANN, even ``import torch`` fails, so a CPU run must never touch it.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from torchair_conformance.errors import ConformanceError

__all__ = ["ENV_VAR", "DEFAULT_IMPL", "OPTION_HELP", "ImplementationError", "Implementation", "resolve", "load",
           "selected_name", "needs_torch_npu", "add_option", "name_problem"]

ENV_VAR = "TORCHAIR_CONFORMANCE_IMPL"
DEFAULT_IMPL = "torchair_ref"
# Implementations that live inside torch_npu: importing them needs `import torch_npu` first (IMPL-3).
_NEEDS_TORCH_NPU = {"torchair", "torchair_npu"}
_SURFACE = ("CompilerConfig", "get_npu_backend", "dynamo_export", "inference", "logger")
_INFERENCE_SURFACE = ("cache_compile", "readable_cache")


class ImplementationError(ConformanceError):
    """IMPL-1: the named module cannot be imported or lacks part of the required surface."""


@dataclass(frozen=True)
class Implementation:
    """IMPL-1/IMPL-2: the module under test and what it declares about itself."""

    name: str
    module: ModuleType
    device: str = "cpu"
    versions: Mapping[str, Any] = field(default_factory=dict)
    capabilities: frozenset = frozenset()
    hooks: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    divergences: str = ""
    label: str = ""  # IMPL-4: what ran, when it is not simply the module (e.g. upstream's Python on a CPU executor)

    @property
    def CompilerConfig(self) -> type:  # noqa: N802 - mirrors the implementation's name
        return self.module.CompilerConfig

    @property
    def get_npu_backend(self) -> Callable[..., Any]:
        return self.module.get_npu_backend

    @property
    def cache_compile(self) -> Callable[..., Any]:
        return self.module.inference.cache_compile

    @property
    def readable_cache(self) -> Callable[..., Any]:
        return self.module.inference.readable_cache

    @property
    def dynamo_export(self) -> Callable[..., Any]:
        return self.module.dynamo_export

    @property
    def logger(self) -> logging.Logger:
        return self.module.logger

    def has(self, capability: str) -> bool:
        """IMPL-2: whether the implementation declares ``capability``."""
        return capability in self.capabilities

    def fast_cache_options(self) -> list[tuple[str, Any]]:
        """IMPL-2 ``fast_cache_config()``: the CF-1 assignments with which this implementation writes a cache
        quickly on its device; none (its true default config) when it offers no such hook."""
        hook = self.hooks.get("fast_cache_config")
        return [] if hook is None else [(str(path), value) for path, value in hook()]

    def threshold_override(self, nbytes: int) -> AbstractContextManager[Any] | None:
        """IMPL-2: the ``set_externalize_threshold`` hook as a context manager, or None when not offered."""
        hook = self.hooks.get("set_externalize_threshold")
        return None if hook is None else hook(nbytes)


#: the one help text of ``--impl`` (pytest, ``bench``, ``nightly``)
OPTION_HELP = f"implementation under test, a module with the IMPL-1 surface (default: ${ENV_VAR}, else {DEFAULT_IMPL})"


def add_option(add: Callable[..., Any], *, required: bool = False) -> None:
    """IMPL-1: the one ``--impl`` option, added with argparse's ``add_argument`` or pytest's ``addoption``."""
    add("--impl", metavar="MODULE", help=OPTION_HELP, **({"required": True} if required else {"default": None}))


def name_problem(name: str) -> str | None:
    """IMPL-1: why ``name`` cannot name an implementation, without importing it (a dotted module name whose top
    package is on this Python's path), or None. The one check of ``--impl``: ``load`` makes it, and the commands
    that start processes make it before they start them."""
    if not all(part.isidentifier() for part in name.split(".")):
        return (f"--impl {name!r}: cannot import it: not a module name; pass an importable module to --impl or "
                f"${ENV_VAR} (such as {DEFAULT_IMPL}, or torchair_npu on an Ascend host)")
    if importlib.util.find_spec(name.split(".")[0]) is None:
        return (f"--impl {name!r}: cannot import it: no such module on this Python's path; pass an importable "
                f"module to --impl or ${ENV_VAR} (such as {DEFAULT_IMPL}, or torchair_npu on an Ascend host)")
    return None


def selected_name(option: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """IMPL-1: the module name: the ``--impl`` value, else ``$TORCHAIR_CONFORMANCE_IMPL``, else ``torchair_ref``."""
    environ = os.environ if environ is None else environ
    return option or environ.get(ENV_VAR) or DEFAULT_IMPL


def needs_torch_npu(name: str) -> bool:
    """IMPL-3: whether the implementation ``name`` lives inside ``torch_npu`` (which must be imported first)."""
    return name.split(".")[0] in _NEEDS_TORCH_NPU


def load(name: str) -> ModuleType:
    """IMPL-3: import the module ``name``, importing ``torch_npu`` first only when ``name`` needs it."""
    if needs_torch_npu(name):
        try:
            importlib.import_module("torch_npu")
        except Exception as exc:  # an ImportError, or CANN's own errors when no NPU runtime is present
            raise ImplementationError(
                f"--impl {name} needs `import torch_npu` to succeed first, and it failed: {exc!r}; "
                "run it in an environment with torch-npu and CANN (tox -e npu)"
            ) from exc
    problem = name_problem(name)
    if problem:
        raise ImplementationError(problem)
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ImplementationError(
            f"cannot import the implementation under test {name!r}: {exc!r}; pass an importable module to --impl "
            f"or ${ENV_VAR} (default {DEFAULT_IMPL!r})"
        ) from exc


def _check_surface(name: str, module: ModuleType) -> None:
    missing = [attr for attr in _SURFACE if not hasattr(module, attr)]
    inference = getattr(module, "inference", None)
    missing += [f"inference.{attr}" for attr in _INFERENCE_SURFACE if not hasattr(inference, attr)]
    if missing:
        raise ImplementationError(
            f"{name!r} is not an implementation of the IMPL-1 surface: missing {', '.join(missing)}; pass a module "
            f"that provides it to --impl or ${ENV_VAR} (default {DEFAULT_IMPL!r})"
        )


def resolve(name: str) -> Implementation:
    """IMPL-1/IMPL-2: import ``name``, check its surface and read its optional ``__conformance__`` mapping."""
    module = load(name)
    _check_surface(name, module)
    declared = getattr(module, "__conformance__", None) or {}
    if not isinstance(declared, Mapping):
        raise ImplementationError(f"{name}.__conformance__ must be a mapping, got {type(declared).__name__}")
    hooks = {k: v for k, v in declared.items() if callable(v)}
    versions = dict(declared.get("versions") or {})
    return Implementation(
        name=name,
        module=module,
        device=str(declared.get("device") or "cpu"),
        versions=versions,
        capabilities=frozenset(declared.get("capabilities") or ()),
        hooks=hooks,
        divergences=str(declared.get("divergences") or name),
        label=str(declared.get("label") or ""),
    )
