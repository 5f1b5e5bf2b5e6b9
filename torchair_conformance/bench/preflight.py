"""What `python -m torchair_conformance bench` checks before its first measurement, so that a usage error never
comes after minutes of measuring.

- `check_arguments`: the paths (the history folder, `--json`) and the thread count, in the CLI's process.
- `check_target`: in one fresh process, as the workers will see them (`python -m torchair_conformance.bench.preflight`,
  `torchair_conformance.process`'s protocol): the implementation imports with its IMPL-1 surface
  (`torchair_conformance.impl.resolve`), the device is there (`torch_npu` imports for `npu`;
  `torch.<device>.is_available()`), and a `package.module:factory` model keeps the contract of `models.from_factory` and
  runs once on its example inputs.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable
from typing import Any

from torchair_conformance import impl, process
from torchair_conformance.bench import presets

#: the devices a benchmark runs on (the workers synchronize through `torch.<device>`)
DEVICES = ("cpu", "cuda", "npu")


def check_arguments(args: argparse.Namespace, history: str | None) -> str | None:
    """Every path argument and the thread count: why one cannot be used, else None."""
    if args.threads < 0:
        return f"--threads must be 0 (inherit) or more, got {args.threads}"
    if history is not None:
        problem = writable_folder(history)
        if problem:
            return f"--history {history!r}: {problem}; pass a folder (or --no-history)"
    if args.json:
        folder = os.path.dirname(os.path.abspath(args.json))
        if os.path.isdir(args.json):
            return f"--json {args.json!r} is a folder; pass a file path"
        if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            return f"--json {args.json!r}: its folder {folder} does not exist or is not writable"
    return None


def writable_folder(path: str) -> str | None:
    """Why `path` cannot be (or become) a writable folder, else None."""
    if os.path.exists(path):
        if not os.path.isdir(path):
            return "is a file, not a folder"
        return None if os.access(path, os.W_OK | os.X_OK) else "is not writable"
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        return f"{parent} is a file, so the folder cannot be created"
    return None if os.access(parent, os.W_OK | os.X_OK) else f"cannot be created ({parent} is not writable)"


def check_target(impl_name: str, device: str | None, model: str, progress: Callable[[str], None]) -> dict[str, Any]:
    """IMPL-1, the device and the model in a fresh process: ``{"error": None, "device": the device to measure on,
    "method": the model's method, "label": what runs (IMPL-4)}``, or an ``error`` that names the value and the fix."""
    what = [f"{impl_name} imports with the IMPL-1 surface"] + ([f"a {device} device is there"] if device else [])
    if presets.is_factory(model):
        what.append(f"{model} keeps the factory contract and runs on its example inputs")
    progress(f"checking that {', '.join(what)} ...")
    try:
        spec = {"impl": impl_name, "device": device, "model": model}
        checked = process.run("torchair_conformance.bench.preflight", spec, env=process.child_env()).result
    except process.ProcessError as exc:
        return {"error": f"--impl {impl_name!r}: checking it crashed its process; pass an importable implementation "
                         f"module such as {impl.DEFAULT_IMPL} or torchair_npu, installed in this environment\n{exc}"}
    if not checked["error"]:
        progress(f"{impl_name} imports; device {checked['device']}; {model}.{checked['method']}")
    if checked.get("uncompiled"):
        flag = os.environ.get("PYTHONDONTWRITEBYTECODE")
        progress(f"note: {len(checked['uncompiled'])} modules of {impl_name} have no cached bytecode "
                 f"({checked['uncompiled'][0]}, ...; PYTHONDONTWRITEBYTECODE is {flag!r}):"
                 " each worker compiles them from source, and the warm figures hold that time, which an installed "
                 "package does not pay; run `python -m compileall` on its folder first, or unset "
                 "PYTHONDONTWRITEBYTECODE")
    return checked


def check(job: dict[str, Any]) -> dict[str, Any]:
    """In the fresh process: the checks of `check_target` (pure over the job, apart from the imports)."""
    name, model = job["impl"], job["model"]
    try:
        implementation = impl.resolve(name)
    except impl.ImplementationError as exc:
        return {"error": f"--impl {name!r}: {exc}"}
    device = job.get("device") or implementation.device
    problem = device_problem(device)
    if problem:
        return {"error": problem}
    compiled = _uncompiled(name.partition(".")[0])
    if not presets.is_factory(model):
        return {"error": None, "device": device, "method": presets.METHODS[presets.canonical(model)],
                "label": implementation.label, **compiled}
    import torch

    from torchair_conformance.bench import models

    try:
        built = models.from_factory(model, device=device)
    except models.ModelError as exc:
        return {"error": str(exc)}
    try:
        with torch.no_grad():
            built.bound()(*built.args, **built.kwargs)
    except Exception as exc:  # noqa: BLE001 - the user's model on the user's inputs: its error, named
        return {"error": f"--model {model}: {built.method}(...) failed on the example inputs it returns: {exc!r}"}
    return {"error": None, "device": device, "method": built.method, "label": implementation.label, **compiled}


def _uncompiled(root: str) -> dict[str, list[str]]:
    """`{"uncompiled": names}` for the modules of package `root` this process compiled from source with no bytecode
    cached for them (PYTHONDONTWRITEBYTECODE set, or a folder Python cannot write): every worker compiles them again,
    and each warm time then holds that, which an installed package does not pay; `{}` when there are none."""
    found = []
    for name, module in list(sys.modules.items()):
        spec = getattr(module, "__spec__", None)
        origin, cached = getattr(spec, "origin", None), getattr(spec, "cached", None)
        if ((name == root or name.startswith(root + ".")) and isinstance(origin, str) and origin.endswith(".py")
                and isinstance(cached, str) and not os.path.exists(cached)):
            found.append(name)
    return {"uncompiled": sorted(found)} if found else {}


def device_problem(device: str) -> str | None:
    """Why the benchmark cannot run on `device` here, else None (imports torch, and torch_npu for `npu`)."""
    if device not in DEVICES:
        return f"--device {device!r}: not one of {', '.join(DEVICES)}"
    if device == "cpu":
        return None
    if device == "npu":
        try:
            importlib.import_module("torch_npu")
        except Exception as exc:  # noqa: BLE001 - ImportError, or CANN's own errors without an NPU runtime
            return (f"--device npu: `import torch_npu` failed ({exc!r}); run on an Ascend host with torch-npu and CANN "
                    f"(tox -e npu), or pass --device cpu")
    import torch

    backend = getattr(torch, device, None)
    if backend is None or not backend.is_available():
        return (f"--device {device}: torch {torch.__version__} sees no {device} device (torch.{device}.is_available() "
                f"is False); pass --device cpu, or run where one is visible")
    return None


def main() -> int:
    process.reply(check(process.read_job()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
