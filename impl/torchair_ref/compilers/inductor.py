"""The Inductor graph compiler (`mode="max-autotune"`, the default) and its light warm loader.

Cold: Inductor compiles the ATen inference graph (through `compile_fx`, which calls `build` as its inner compiler);
the record keeps Inductor's generated Python wrapper and, per C++ kernel, the digest of its source and of the
built shared object.

Warm (`load`): the wrapper is run with small stand-ins for the few Inductor helpers it imports, so that a warm start
imports neither Inductor nor Dynamo (about 2.5 s of imports on a CPU host). Each kernel declaration is bound to the
record's kernel by the SHA-256 of its own C++ source, and loaded straight from a shared object whose SHA-256 matches
the record: the copy kept in the cache's `kernels/` folder (`ge_cache=True`, the analogue of GE's `.om` cache), else
the one Inductor left in its own cache. The file is opened without following links or waiting on a FIFO, checked
(`fstat`: a regular file of ours), read and hashed from that descriptor, and those very bytes are loaded (from a
sealed memfd): the path is never opened again, so swapping the file after the hash changes nothing. When neither
is there, the kernel is rebuilt from the source in the wrapper by Inductor itself (slow, but correct). Triton
kernels (CUDA) always go through Inductor's own loader.

The rules that read the wrapper's text (its import lines, kernel sources, redundant input asserts) are pure
functions in `inductor_wrapper`.

Record: `{"compiler": "inductor", "source": str, "kernels": [{"source_sha256", "module", "so_sha256", "so_path",
"file"}], "extern_kernels": [names], "inputs_to_check": [int]}`.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.machinery
import importlib.util
import logging
import os
import re
import sys
import tempfile
import types
from collections.abc import Callable
from typing import Any

import torch

from torchair_ref import _files, _torch
from torchair_ref.compilers import CompiledGraph, Job
from torchair_ref.compilers.inductor_wrapper import kernel_sources, unknown_import, without_checked_asserts
from torchair_ref.errors import BrokenCacheError, UncacheableError

logger = logging.getLogger("torchair_ref")

_ALIGN_BYTES = 64
_MAX_KERNEL_BYTES = 256 << 20
#: memfds of the kernels loaded from memory, open for the life of the process (see `_load_extension`)
_LOADED_IMAGES: list[int] = []
#: kernels this process loaded from a cache: module name -> (recorded so_path, the verified bytes, the loaded path)
_LOADED_KERNELS: dict[str, tuple[str, bytes, str | None]] = {}
_KERNEL_DECLARATION = re.compile(r"^(\w+) = async_compile\.cpp_pybinding\(", re.MULTILINE)
NAME = "inductor"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build(gm: Any, example_inputs: list, job: Job) -> Callable:
    """CC-7: compile Dynamo's `gm` with Inductor (`compile_fx`, with `job.decompositions` over Inductor's own);
    Inductor calls back for each ATen graph, which we compile (`compile_fx_inner`) and record."""

    def inner(aten_gm: Any, inputs: list, **kwargs: Any) -> Any:
        problem, aliases = job.review(aten_gm, inputs)
        output, graph = compiled(aten_gm, inputs, keep_kernels=job.keep_kernels, **kwargs)
        job.accept(graph, problem, aliases)
        return output

    table = {**_torch.inductor_decompositions(), **job.decompositions} if job.decompositions else None
    return _torch.compile_fx()(gm, example_inputs, inner_compile=inner, decompositions=table)


def compiled(aten_gm: Any, example_inputs: list, *, keep_kernels: bool, **inner_kwargs: Any
             ) -> tuple[Any, CompiledGraph]:
    """Inductor's output object for one ATen graph, and our record of it (not cacheable, still run, when this
    torch lays its output out otherwise)."""
    output = _torch.compile_fx_inner()(aten_gm, example_inputs, **inner_kwargs)
    try:
        return output, _describe(output, keep_kernels)
    except Exception as exc:  # noqa: BLE001 - private details of another torch release: uncacheable, still runs
        problem = UncacheableError(f"Inductor's output is not readable on torch {torch.__version__} ({exc!r})")
        return output, CompiledGraph(boxed=output, record={}, uncacheable=problem)


def _describe(output: Any, keep_kernels: bool) -> CompiledGraph:
    """Our record of Inductor's output: its wrapper source and, per C++ kernel, the shared object it loaded."""
    source = getattr(output, "source_code", None)
    call = getattr(output, "current_callable", None)
    if not isinstance(source, str) or call is None:
        problem = UncacheableError("Inductor produced no Python wrapper")
        return CompiledGraph(boxed=output, record={}, uncacheable=problem)
    scope = getattr(getattr(call, "__func__", call), "__globals__", {})
    kernels, files = [], {}
    problem: UncacheableError | None = None
    sources = kernel_sources(source)
    for name in _KERNEL_DECLARATION.findall(source):
        obj = scope.get(name)
        module = getattr(obj, "__self__", None)
        so_path = getattr(module, "__file__", None)
        # A kernel this process loaded from a cache (`_load_kernel`) is reused by Inductor when a variant is compiled
        # beside it (CC-17/CC-23): its bytes are the ones that were verified and loaded, its path the recorded one.
        loaded = _LOADED_KERNELS.get(getattr(module, "__name__", None))
        if loaded is not None and so_path == loaded[2]:
            so_path = loaded[0]
        elif not (isinstance(obj, types.BuiltinFunctionType) and isinstance(so_path, str) and so_path.endswith(".so")):
            problem = UncacheableError(f"kernel {name} is not a loaded shared object")
            continue
        if name not in sources:
            problem = UncacheableError(f"the source of kernel {name} is not a string literal in Inductor's wrapper")
            continue
        if loaded is not None and so_path == loaded[0]:
            so_bytes = loaded[1]
        else:
            with open(so_path, "rb") as handle:
                so_bytes = handle.read()
        entry = {"name": name, "module": module.__name__, "source_sha256": sha256_bytes(sources[name].encode()),
                 "so_sha256": sha256_bytes(so_bytes), "so_path": so_path}
        if keep_kernels:
            entry["file"] = entry["so_sha256"][:40] + ".so"
            files[entry["file"]] = so_bytes
        kernels.append(entry)
    extern = sorted({line.split("extern_kernels.", 1)[1].split("(", 1)[0]
                     for line in source.splitlines() if "extern_kernels." in line and "import" not in line})
    extern_kernels = _torch.inductor_extern_kernels()
    if any(getattr(extern_kernels, n, None) is not getattr(torch, n, object()) for n in extern):
        extern = None  # some extern kernel is Inductor's own: the warm start then imports Inductor's table
    if getattr(output, "constants", None):
        problem = UncacheableError("the compiled graph holds tensor constants, which this cache format does not store")
    record = {
        "compiler": "inductor",
        "source": source,
        "kernels": kernels,
        "extern_kernels": extern,
        "inputs_to_check": list(getattr(output, "inputs_to_check", ()) or ()),
    }
    return CompiledGraph(boxed=output, record=record, files=files, uncacheable=problem)


def load(record: dict[str, Any], kernel_dir: str, guaranteed: list | None = None) -> Callable[[list], Any]:
    """CC-14: run Inductor's wrapper with local stand-ins (the light loader) when every import line of it is one
    the stand-ins are known to cover; otherwise run it as it is, with Inductor's own helpers and kernel loader.
    The light loader takes kernels only from shared objects verified by their digest and bound by their source's,
    and leaves out the wrapper's input asserts that `guaranteed` covers (`without_checked_asserts`)."""
    unknown = unknown_import(record["source"])
    if unknown is not None:
        logger.info("Loading the graph with Inductor's own loader: the wrapper imports %r, which the light loader "
                    "does not know", unknown)
        name = "torchair_ref_inductor_" + sha256_bytes(record["source"].encode())[:16]
        namespace: dict[str, Any] = {"__name__": name}
        exec(compile(record["source"], f"<torchair_ref inductor graph {name}>", "exec"), namespace)  # noqa: S102
        return _aligned(namespace["call"], record)
    namespace: dict[str, Any] = {
        "__name__": "torchair_ref_inductor_" + sha256_bytes(record["source"].encode())[:16],
        "run_intermediate_hooks": _run_intermediate_hooks,
        "maybe_profile": _maybe_profile,
        "align": _align,
        "AsyncCompile": lambda: _AsyncCompile(record["kernels"], kernel_dir),
        "extern_kernels": _extern_kernels(record["extern_kernels"]),
        "assert_tensor_metadata": _tensor_metadata_check(_torch.assert_size_stride()),
    }
    lines = []
    for line in without_checked_asserts(record["source"], guaranteed).splitlines():
        name = _torch.INDUCTOR_HELPER_IMPORTS.get(line.strip())
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


def _tensor_metadata_check(assert_size_stride: Callable[..., None]) -> Callable[..., None]:
    """Stand-in for Inductor's runtime check of an op's output (torch 2.14): dtype, then sizes and strides (with
    `assert_size_stride` bound once, at load time: the wrapper calls the check per op per call)."""

    def assert_tensor_metadata(tensor: torch.Tensor | None, size: Any, stride: Any, dtype: torch.dtype,
                               op_name: str | None = None) -> None:
        if tensor is None:
            return
        if tensor.dtype != dtype:
            where = f" (op {op_name})" if op_name else ""
            raise RuntimeError(f"expected dtype {dtype} but got {tensor.dtype}{where}")
        assert_size_stride(tensor, size, stride, op_name)

    return assert_tensor_metadata


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

    def __init__(self, kernels: list[dict], kernel_dir: str) -> None:
        # Each declaration is bound by the digest of its own source, never by its place among the declarations.
        self._kernels = {k["source_sha256"]: k for k in kernels if isinstance(k.get("source_sha256"), str)}
        self._kernel_dir = kernel_dir
        self._real: Any = None

    def cpp_pybinding(self, argtypes: list[str], source: str) -> Any:
        entry = self._kernels.get(sha256_bytes(source.encode()))
        loaded = _load_kernel(entry, self._kernel_dir) if entry else None
        if loaded is not None:
            return loaded
        return self._inductor().cpp_pybinding(argtypes, source)

    def wait(self, scope: dict) -> None:
        if self._real is not None:
            self._real.wait(scope)

    def _inductor(self) -> Any:
        if self._real is None:
            self._real = _torch.inductor_async_compile()()
        return self._real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inductor(), name)


def _load_kernel(entry: dict[str, Any], kernel_dir: str) -> Any:
    """CC-14/CC-17: the kernel of the first copy of its shared object whose SHA-256 matches the record, loaded from
    the very bytes that were hashed; None when no copy matches (Inductor then rebuilds it from its source).

    The copy kept in the cache (`kernels/`) must be a regular 0600 file of ours: anything else there is damage
    (`BrokenCacheError`; the cache is then discarded). The one in Inductor's own cache is skipped unless it is a
    regular file of ours that no one else can write.
    """
    candidates = []
    if entry.get("file"):
        candidates.append((os.path.join(kernel_dir, entry["file"]), _files.check_owned_private, True))
    candidates.append((entry["so_path"], _files.check_owned_unshared, False))
    for path, check, kept in candidates:
        try:
            data = _files.read_checked(path, what="kernel", limit=_MAX_KERNEL_BYTES, check=check)
        except BrokenCacheError as exc:
            if kept and not isinstance(exc.__cause__, FileNotFoundError):
                raise
            continue
        if sha256_bytes(data) != entry["so_sha256"]:
            continue
        module_name = entry["module"]
        module = sys.modules.get(module_name)
        if module is None:
            os.environ["_TORCHINDUCTOR_PYOBJECT_TENSOR_DATA_PTR"] = str(_torch.pyobject_tensor_data_ptr())
            module = _load_extension(module_name, data)
            sys.modules[module_name] = module
            _LOADED_KERNELS[module_name] = (entry["so_path"], data, getattr(module, "__file__", None))
        return module.kernel
    return None


def _load_extension(module_name: str, data: bytes) -> types.ModuleType:
    """Load the extension module `module_name` from `data`: a sealed memfd (`/proc/self/fd/N`), else a copy in a
    fresh private folder; never from a path anyone else could change between the hash and the load."""
    try:
        fd = os.memfd_create("torchair_ref_kernel", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    except (AttributeError, OSError):
        with tempfile.TemporaryDirectory(prefix="torchair_ref_kernel_") as private:  # mode 0700
            path = os.path.join(private, module_name + ".so")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            return _exec_extension(module_name, path)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK
                    | fcntl.F_SEAL_SEAL)
        module = _exec_extension(module_name, f"/proc/self/fd/{fd}")
    except BaseException:
        os.close(fd)
        raise
    # The descriptor stays open: the dynamic linker knows a loaded object by its path, so a later kernel loaded
    # through the same /proc/self/fd/N would be handed this one (every kernel's init function is PyInit_kernel).
    _LOADED_IMAGES.append(fd)
    return module


def _exec_extension(module_name: str, path: str) -> types.ModuleType:
    loader = importlib.machinery.ExtensionFileLoader(module_name, path)
    spec = importlib.util.spec_from_file_location(module_name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module
