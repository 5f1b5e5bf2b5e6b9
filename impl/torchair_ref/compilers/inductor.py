"""The Inductor graph compiler (`mode="max-autotune"`, the default) and its light warm loader.

Cold: Inductor compiles the ATen inference graph (through `compile_fx`, which calls `build` as its inner compiler);
the record keeps Inductor's generated Python wrapper and, per C++ kernel, the digest of its source and of the
built shared object.

Warm (`load`): the wrapper is run with small stand-ins for the few Inductor helpers it imports, so that a warm start
imports neither Inductor nor Dynamo (about 2.5 s of imports on a CPU host). Each kernel is loaded straight from a
shared object whose SHA-256 matches the record: the copy kept in the cache's `kernels/` folder (`ge_cache=True`,
the analogue of GE's `.om` cache), else the one Inductor left in its own cache. When neither is there, the kernel
is rebuilt from the source in the wrapper by Inductor itself (slow, but correct). Triton kernels (CUDA) always go
through Inductor's own loader.

Record: `{"compiler": "inductor", "source": str, "kernels": [{"source_sha256", "module", "so_sha256", "so_path",
"file"}], "extern_kernels": [names], "inputs_to_check": [int]}`.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib.machinery
import importlib.util
import logging
import os
import re
import sys
import types
from typing import Any, Callable

import torch

from torchair_ref.compilers import CompiledGraph

logger = logging.getLogger("torchair_ref")

#: import lines of Inductor's wrapper that the warm loader replaces, line -> name bound in the wrapper's namespace
_SHIMMED_IMPORTS = {
    "from torch._inductor.hooks import run_intermediate_hooks": "run_intermediate_hooks",
    "from torch._inductor.utils import maybe_profile": "maybe_profile",
    "from torch._inductor.codegen.memory_planning import _align as align": "align",
    "from torch._inductor.async_compile import AsyncCompile": "AsyncCompile",
    "from torch._inductor.select_algorithm import extern_kernels": "extern_kernels",
}
#: the other import lines of the wrapper, run as they are (standard library and torch's public namespace)
_PLAIN_IMPORTS = frozenset({
    "from ctypes import c_void_p, c_long, c_int",
    "import torch",
    "import math",
    "import random",
    "import os",
    "import tempfile",
    "from math import inf, nan",
    "from cmath import nanj",
    "from torch import device, empty_strided",
})
_SCRIPT_TAIL = ("def get_args(", "def benchmark_compiled_module(", "if __name__ == ")
_IMPORT_LINE = re.compile(r"^\s*(?:import|from)\s")
_ALIGN_BYTES = 64
_KERNEL_DECLARATION = re.compile(r"^(\w+) = async_compile\.cpp_pybinding\(", re.MULTILINE)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build(aten_gm: Any, example_inputs: list, *, keep_kernels: bool, **inner_kwargs: Any) -> tuple[Any, CompiledGraph]:
    """CC-7: compile with Inductor; returns Inductor's output object and our record of it."""
    from torch._inductor.compile_fx import compile_fx_inner

    output = compile_fx_inner(aten_gm, example_inputs, **inner_kwargs)
    try:
        return output, _describe(output, keep_kernels)
    except Exception as exc:  # noqa: BLE001 - private details of another torch release: uncacheable, still runs
        problem = f"Inductor's output is not readable on torch {torch.__version__} ({exc!r})"
        return output, CompiledGraph(boxed=output, record={}, uncacheable=problem)


def _describe(output: Any, keep_kernels: bool) -> CompiledGraph:
    """Our record of Inductor's output: its wrapper source and, per C++ kernel, the shared object it loaded."""
    source = getattr(output, "source_code", None)
    call = getattr(output, "current_callable", None)
    if not isinstance(source, str) or call is None:
        return CompiledGraph(boxed=output, record={}, uncacheable="Inductor produced no Python wrapper")
    scope = getattr(getattr(call, "__func__", call), "__globals__", {})
    kernels, files, problem = [], {}, None
    for name in _KERNEL_DECLARATION.findall(source):
        obj = scope.get(name)
        module = getattr(obj, "__self__", None)
        so_path = getattr(module, "__file__", None)
        if not (isinstance(obj, types.BuiltinFunctionType) and isinstance(so_path, str) and so_path.endswith(".so")):
            problem = f"kernel {name} is not a loaded shared object"
            continue
        with open(so_path, "rb") as handle:
            so_bytes = handle.read()
        entry = {"name": name, "module": module.__name__, "so_sha256": sha256_bytes(so_bytes), "so_path": so_path}
        if keep_kernels:
            entry["file"] = entry["so_sha256"][:40] + ".so"
            files[entry["file"]] = so_bytes
        kernels.append(entry)
    extern = sorted({line.split("extern_kernels.", 1)[1].split("(", 1)[0]
                     for line in source.splitlines() if "extern_kernels." in line and "import" not in line})
    from torch._inductor.select_algorithm import extern_kernels

    if any(getattr(extern_kernels, n, None) is not getattr(torch, n, object()) for n in extern):
        extern = None  # some extern kernel is Inductor's own: the warm start then imports Inductor's table
    if getattr(output, "constants", None):
        problem = "the compiled graph holds tensor constants, which this cache format does not store"
    record = {
        "compiler": "inductor",
        "source": source,
        "kernels": kernels,
        "extern_kernels": extern,
        "inputs_to_check": list(getattr(output, "inputs_to_check", ()) or ()),
    }
    return CompiledGraph(boxed=output, record=record, files=files, uncacheable=problem)


def unknown_import(source: str) -> str | None:
    """The first import line of the wrapper that the light loader does not know, or None (pure).

    The wrapper's tail (`get_args`, `benchmark_compiled_module`, the `__main__` block) only runs as a script.
    """
    for line in source.splitlines():
        if line.startswith(_SCRIPT_TAIL):
            break
        if _IMPORT_LINE.match(line):
            stripped = line.strip()
            if stripped not in _PLAIN_IMPORTS and stripped not in _SHIMMED_IMPORTS:
                return stripped
    return None


def load(record: dict[str, Any], kernel_dir: str) -> Callable[[list], Any]:
    """CC-14: run Inductor's wrapper with local stand-ins (the light loader) when every import line of it is one
    the stand-ins are known to cover; otherwise run it as it is, with Inductor's own helpers and kernel loader."""
    unknown = unknown_import(record["source"])
    if unknown is not None:
        logger.info("Loading the graph with Inductor's own loader: the wrapper imports %r, which the light loader "
                    "does not know", unknown)
        name = "torchair_ref_inductor_" + sha256_bytes(record["source"].encode())[:16]
        namespace: dict[str, Any] = {"__name__": name}
        exec(compile(record["source"], f"<torchair_ref inductor graph {name}>", "exec"), namespace)  # noqa: S102
        return _aligned(namespace["call"], record)
    kernels = {k["name"]: k for k in record["kernels"]}
    namespace: dict[str, Any] = {
        "__name__": "torchair_ref_inductor_" + sha256_bytes(record["source"].encode())[:16],
        "run_intermediate_hooks": _run_intermediate_hooks,
        "maybe_profile": _maybe_profile,
        "align": _align,
        "AsyncCompile": lambda: _AsyncCompile(kernels, kernel_dir),
        "extern_kernels": _extern_kernels(record["extern_kernels"]),
    }
    lines = []
    for line in record["source"].splitlines():
        name = _SHIMMED_IMPORTS.get(line.strip())
        if name is not None and namespace.get(name) is not None:
            continue
        lines.append(line)
    exec(compile("\n".join(lines), f"<torchair_ref inductor graph {namespace['__name__']}>", "exec"), namespace)  # noqa: S102
    return _aligned(namespace["call"], record)


def _aligned(call: Callable[[list], Any], record: dict[str, Any]) -> Callable[[list], Any]:
    """The wrapper's `call`, copying the inputs Inductor asked to check for alignment when they are misaligned."""
    misaligned = record.get("inputs_to_check") or []
    if not misaligned:
        return call

    def boxed(args: list) -> Any:
        for i in misaligned:
            arg = args[i]
            if isinstance(arg, torch.Tensor) and arg.data_ptr() % 16:
                args[i] = arg.clone()
        return call(args)

    return boxed


def _run_intermediate_hooks(name: str, value: Any) -> None:
    """Stand-in for Inductor's debugging hook, which does nothing unless Inductor's debug hooks are installed."""


@contextlib.contextmanager
def _maybe_profile(should_profile: bool, *args: Any, **kwargs: Any):
    if should_profile:
        with torch.profiler.profile(*args, **kwargs) as prof:
            yield prof
    else:
        yield


def _align(nbytes: int) -> int:
    return (nbytes + _ALIGN_BYTES - 1) & -_ALIGN_BYTES


def _extern_kernels(names: list[str] | None) -> Any:
    if names is None:
        return None  # the wrapper keeps its own import of Inductor's extern kernels
    return types.SimpleNamespace(**{name: getattr(torch, name) for name in names})


class _AsyncCompile:
    """Stand-in for Inductor's AsyncCompile: C++ kernels come from verified shared objects, the rest from Inductor."""

    def __init__(self, kernels: dict[str, dict], kernel_dir: str) -> None:
        self._kernels = list(kernels.values())
        self._next = 0
        self._kernel_dir = kernel_dir
        self._real: Any = None

    def cpp_pybinding(self, argtypes: list[str], source: str) -> Any:
        # Kernels are declared in the wrapper in the order the record lists them.
        entry = self._kernels[self._next] if self._next < len(self._kernels) else None
        self._next += 1
        loaded = _load_kernel(entry, self._kernel_dir) if entry else None
        if loaded is not None:
            return loaded
        return self._inductor().cpp_pybinding(argtypes, source)

    def wait(self, scope: dict) -> None:
        if self._real is not None:
            self._real.wait(scope)

    def _inductor(self) -> Any:
        if self._real is None:
            from torch._inductor.async_compile import AsyncCompile

            self._real = AsyncCompile()
        return self._real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inductor(), name)


def _load_kernel(entry: dict[str, Any], kernel_dir: str) -> Any:
    """Load one kernel's shared object if a copy with the recorded digest exists; None otherwise."""
    candidates = []
    if entry.get("file"):
        candidates.append(os.path.join(kernel_dir, entry["file"]))
    candidates.append(entry["so_path"])
    for path in candidates:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        if sha256_bytes(data) != entry["so_sha256"]:
            continue
        module_name = entry["module"]
        module = sys.modules.get(module_name)
        if module is None:
            os.environ["_TORCHINDUCTOR_PYOBJECT_TENSOR_DATA_PTR"] = str(
                torch._C._dynamo.guards._torchinductor_pyobject_tensor_data_ptr
            )
            loader = importlib.machinery.ExtensionFileLoader(module_name, path)
            spec = importlib.util.spec_from_file_location(module_name, path, loader=loader)
            module = importlib.util.module_from_spec(spec)
            loader.exec_module(module)
            sys.modules[module_name] = module
        return module.kernel
    return None
