"""``inspect FILE.air --run INPUTS.npz [--compare EXPECTED.npz]`` (EX-11 on a laptop): run the main graph on CPU
with the project's GE executor (``ge_executor``) and print its outputs, and with ``--compare`` the max difference
from expected outputs.

Inputs: an ``.npz`` (``numpy.savez``) whose arrays are named by the graph's ``Data`` op names, or positional
(``arr_0``, ``arr_1``, ... as ``numpy.savez(path, *arrays)`` names them) in ``Data`` index order. A floating-point
array is cast to its ``Data`` op's float dtype (numpy has no bfloat16). Expected outputs: positional or ``out0``,
``out1``, ... in ``NetOutput`` order. Arrays are read with ``allow_pickle=False``.

Bounds, so that a hostile file cannot ask for unbounded work: at most ``MAX_RUN_OPS`` ops, at most
``MAX_RUN_ELEMENTS`` elements in any tensor the graph declares (descs, ``Const`` values, ``FileConstant`` shapes) or
the inputs hold, and, where the OS allows, ``CPU_SECONDS`` of CPU time and ``MEMORY_BYTES`` of extra address space
for the run. Anything refused or failing is ``RunRefused`` (exit status 2 with its message).
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
from collections.abc import Iterator
from typing import Any

import ge_executor  # its surface resolves on first use: torch is imported by load(), not here
from ge_executor import ge_ir

from ..errors import TorchairRefError

MAX_RUN_OPS = 100_000
MAX_RUN_ELEMENTS = 1 << 28
CPU_SECONDS = 300
MEMORY_BYTES = 8 << 30


class RunRefused(TorchairRefError, ValueError):
    """The graph or its inputs cannot be run here; the message says why."""


def _dims_of(op: Any) -> Iterator[tuple[str, list[int]]]:
    for k, desc in enumerate(op.output_desc):
        yield f"output {k}", list(desc.shape.dim)
    if op.type == "Const" and "value" in op.attr:
        yield "value", list(op.attr["value"].t.desc.shape.dim)
    if op.type == "FileConstant" and "shape" in op.attr:
        yield "shape attr", list(op.attr["shape"].list.i)


def check_bounds(graph: Any) -> None:
    """RunRefused when the graph has too many ops or declares a tensor past ``MAX_RUN_ELEMENTS``."""
    if len(graph.op) > MAX_RUN_OPS:
        raise RunRefused(f"the graph has {len(graph.op)} ops; --run handles at most {MAX_RUN_OPS}")
    for op in graph.op:
        for what, dims in _dims_of(op):
            known = [d for d in dims if d >= 0]
            if len(dims) > 64 or math.prod(known) > MAX_RUN_ELEMENTS:
                shown = f"{dims[:8]}{'...' if len(dims) > 8 else ''}"
                raise RunRefused(f"op {op.name!r} ({op.type}) declares {what} {shown}: more than "
                                 f"{MAX_RUN_ELEMENTS} elements (or 64 dims), which --run does not run")


def _arrays(path: str, what: str) -> dict[str, Any]:
    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {}
            for key in npz.files:
                array = npz[key]
                if array.size > MAX_RUN_ELEMENTS:
                    raise RunRefused(f"{what} {path}: array {key!r} has {array.size} elements, more than "
                                     f"{MAX_RUN_ELEMENTS}")
                arrays[key] = array
            return arrays
    except RunRefused:
        raise
    except Exception as exc:  # not a zip, a pickled object, a bad header: all say the same to the user
        raise RunRefused(f"{what} {path} is not a readable .npz of plain arrays ({type(exc).__name__}: {exc})") from exc


def _inputs(graph: Any, path: str) -> list[Any]:
    import torch

    arrays = _arrays(path, "inputs")
    data = sorted((op for op in graph.op if op.type == "Data"), key=lambda op: op.attr["index"].i)
    names = [op.name for op in data]
    keys = names if set(names) <= set(arrays) else [f"arr_{k}" for k in range(len(data))]
    missing = [k for k in keys if k not in arrays]
    if missing:
        raise RunRefused(f"inputs {path} has arrays {sorted(arrays)}; the graph's Data ops need {names} (by name) "
                         f"or arr_0..arr_{len(data) - 1} (numpy.savez(path, *arrays), in Data index order)")
    tensors = []
    for op, key in zip(data, keys):
        t = torch.from_numpy(arrays[key].copy())
        want = ge_ir.proto_dtype_name(op.output_desc[0].dtype) if op.output_desc else None
        if t.is_floating_point() and want in ("DT_FLOAT", "DT_FLOAT16", "DT_BF16", "DT_DOUBLE"):
            t = t.to({"DT_FLOAT": torch.float32, "DT_FLOAT16": torch.float16, "DT_BF16": torch.bfloat16,
                      "DT_DOUBLE": torch.float64}[want])
        tensors.append(t)
    return tensors


@contextlib.contextmanager
def _limits() -> Iterator[None]:
    """CPU time and address-space limits for the run, where the OS has them; CPU overrun raises RunRefused."""
    try:
        import resource
    except ImportError:  # not on this OS: the op and element bounds still hold
        yield
        return
    saved = {r: resource.getrlimit(r) for r in (resource.RLIMIT_CPU, resource.RLIMIT_AS)}

    def overrun(*_args: Any) -> None:
        raise RunRefused(f"the graph ran for more than {CPU_SECONDS} s of CPU time")

    previous = signal.signal(signal.SIGXCPU, overrun)
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu = int(used.ru_utime + used.ru_stime) + CPU_SECONDS
    with open("/proc/self/statm") if os.path.exists("/proc/self/statm") else contextlib.nullcontext() as statm:
        size = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE") if statm else 0
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, saved[resource.RLIMIT_CPU][1]))
        if size:
            resource.setrlimit(resource.RLIMIT_AS, (size + MEMORY_BYTES, saved[resource.RLIMIT_AS][1]))
        yield
    finally:
        for r, value in saved.items():
            resource.setrlimit(r, value)
        signal.signal(signal.SIGXCPU, previous)


def run(model: Any, air_path: str, inputs_path: str, compare_path: str | None) -> str:
    """Run ``model``'s main graph on the inputs in ``inputs_path``; the report text (RunRefused on any failure)."""
    import torch

    graph = model.graph[0]
    check_bounds(graph)
    inputs = _inputs(graph, inputs_path)
    try:
        with _limits(), torch.no_grad():
            outputs = ge_executor.load(graph, weights_dir=os.path.dirname(os.path.abspath(air_path))).run(inputs)
    except (ge_executor.GeExecutorError, RuntimeError, MemoryError, ValueError, TypeError, IndexError) as exc:
        raise RunRefused(f"the graph cannot be run here: {type(exc).__name__}: {exc}") from exc
    lines = [f"outputs ({len(outputs)}):"]
    for k, t in enumerate(outputs):
        lines.append(f"  [{k}] {t.dtype} {list(t.shape)}")
        lines += [f"      {line}" for line in repr(t).splitlines()[:12]]
    if compare_path is not None:
        lines += _compare(outputs, compare_path)
    return "\n".join(lines)


def _compare(outputs: list[Any], path: str) -> list[str]:
    import torch

    arrays = _arrays(path, "expected outputs")
    keys = [f"out{k}" for k in range(len(outputs))]
    if not set(keys) <= set(arrays):
        keys = [f"arr_{k}" for k in range(len(outputs))]
    if not set(keys) <= set(arrays):
        raise RunRefused(f"expected outputs {path} has arrays {sorted(arrays)}; need out0..out{len(outputs) - 1} "
                         f"or arr_0..arr_{len(outputs) - 1}, one per graph output")
    lines = [f"compared with {path}:"]
    for k, (t, key) in enumerate(zip(outputs, keys)):
        want = torch.from_numpy(arrays[key].copy())
        if list(want.shape) != list(t.shape):
            lines.append(f"  [{k}] shape {list(t.shape)}, expected {list(want.shape)}")
            continue
        diff = (t.double() - want.double()).abs().max().item() if t.numel() else 0.0
        lines.append(f"  [{k}] max |output - expected| = {diff:.6g}")
    return lines
