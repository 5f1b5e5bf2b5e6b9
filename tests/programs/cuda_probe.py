"""A device check (not a test): one fresh process of a bench model on a device, cold, warm or eager (SPEC CC-14).

Usage: `python -m tests.programs.cuda_probe cold|warm|eager CACHE_DIR MODEL DEVICE` (`PROBE_DYNAMIC=0` for
`dynamic=False`; `PROBE_SPAWNED`: the wall-clock time the process was started, for time to first output). Prints one
line `PROBE {json}`: time to first output, max |out - eager| (cold and warm), graphs Dynamo traced, and whether
Dynamo, Inductor and Triton were imported, with the stack that first imported each (a warm start on CPU imports
neither Dynamo nor Inductor; `cuda_check.sh` runs this on a lent GPU to see what a CUDA warm start imports).
"""
from __future__ import annotations

import json
import os
import sys
import time
import traceback
from typing import Any

_WATCHED = ("torch._dynamo", "torch._inductor", "triton")


class _FirstImports:
    """A meta path finder that finds nothing: it only notes the stack that first imports each watched module."""

    def __init__(self) -> None:
        self.stacks: dict[str, list[str]] = {}

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name in _WATCHED and name not in self.stacks:
            frames = [f for f in traceback.extract_stack()[:-1]
                      if "importlib" not in f.filename and "<frozen" not in f.filename]
            self.stacks[name] = [f"{f.filename}:{f.lineno} {f.name}" for f in frames][-30:]


def _tensors(value: Any) -> list[Any]:
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _tensors(item)]
    return []


def main(argv: list[str]) -> int:
    spawned = float(os.environ.get("PROBE_SPAWNED", time.time()))
    finder = _FirstImports()
    sys.meta_path.insert(0, finder)
    mode, cache_dir, model, device = argv
    import torch

    from torchair_conformance.bench import models

    built = models.build(model, device=device)
    if mode == "eager":
        function = built.bound()
    else:
        import torchair_ref

        function = torchair_ref.inference.cache_compile(
            built.bound(), dynamic=os.environ.get("PROBE_DYNAMIC", "1") == "1", cache_dir=cache_dir, ge_cache=True)
    with torch.no_grad():
        out = function(*built.args, **built.kwargs)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    found: dict[str, Any] = {"mode": mode, "model": model, "device": device, "torch": torch.__version__,
                             "ttfo_s": round(time.time() - spawned, 3)}
    found.update({f"{name.rpartition('.')[2].lstrip('_')}_imported": name in sys.modules for name in _WATCHED})
    if mode != "eager":
        with torch.no_grad():
            expected = built.bound()(*built.args, **built.kwargs)
        found["max_abs_diff_vs_eager"] = max(
            [float((a.float() - b.float()).abs().max()) for a, b in zip(_tensors(out), _tensors(expected))] or [0.0])
    found["unique_graphs"] = 0
    if "torch._dynamo" in sys.modules:
        from torch._dynamo.utils import counters

        found["unique_graphs"] = int(counters["stats"]["unique_graphs"])
    found["first_import_stacks"] = finder.stacks
    print("PROBE " + json.dumps(found))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
