"""The seam between the reference and torch's private APIs (`torchair_ref._torch`): it is the only place naming
them, every accessor resolves on the running torch, the warm ones import neither Dynamo nor Inductor, and the
conventions of Dynamo's output it names hold for what this torch produces."""
from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

IMPL = Path(__file__).resolve().parents[2] / "impl" / "torchair_ref"
#: a private torch name or a convention of Dynamo's output (issue 23's grep); torch.__version__/__file__ are public
PRIVATE = re.compile(r"torch\._(?!_(version|file)__)|_C\._|fx\.experimental|torch\.utils\._|__compiled_fn|"
                     r"__resume_at|_parameters\[|__builtins_dict|__import_(?!_\()|top_saved_tensors_hooks")


def accessors(warm: bool) -> list[str]:
    from torchair_ref import _torch

    return [name for name, obj in vars(_torch).items()
            if inspect.isfunction(obj) and obj.__module__ == _torch.__name__ and ("Warm." in obj.__doc__) == warm]


def _private_in_code(path: Path) -> list[str]:
    """Private torch names in the code of `path` (imports and attribute chains, however deep the `_` part sits:
    `torch.distributed.distributed_c10d._x`), which the text pattern cannot see. `torch.ops.<namespace>` chains are
    operator names a lowering matches in graphs, not Python APIs."""
    def private(dotted: str) -> bool:
        parts = dotted.split(".")
        return (parts[0] == "torch" and parts[1:2] != ["ops"]
                and any(p.startswith("_") and not p.startswith("__") for p in parts[1:]))

    def dotted(node: ast.AST) -> str | None:
        names = []
        while isinstance(node, ast.Attribute):
            names.append(node.attr)
            node = node.value
        return ".".join([node.id, *reversed(names)]) if isinstance(node, ast.Name) else None

    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            names = [dotted(node)] if isinstance(node, ast.Attribute) else []
        found += [f"{path.relative_to(IMPL)}:{node.lineno}: {name}" for name in names if name and private(name)]
    return found


def test_only_the_seam_names_private_torch_apis() -> None:
    others = [path for path in sorted(IMPL.rglob("*.py")) if path.name != "_torch.py"]
    found = [f"{path.relative_to(IMPL)}:{n}: {line.strip()}"
             for path in others for n, line in enumerate(path.read_text().splitlines(), 1) if PRIVATE.search(line)]
    found += [hit for path in others for hit in _private_in_code(path)]
    assert not found, "private torch names outside torchair_ref/_torch.py:\n" + "\n".join(sorted(set(found)))


def test_warm_accessors_import_neither_dynamo_nor_inductor() -> None:
    names = accessors(warm=True)
    assert {"set_grad_enabled_fn", "tensor_guards", "global_state_guard", "assert_size_stride"} <= set(names)
    script = ("import sys\nfrom torchair_ref import _torch\n"
              + "".join(f"assert _torch.{name}() is not None\n" for name in names)
              + "print(sorted(m for m in ('torch._dynamo', 'torch._inductor') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=300)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


@pytest.mark.slow
def test_cold_accessors_resolve_and_dynamo_conventions_hold() -> None:
    """Every cold accessor resolves on this torch; a traced function's transformed code calls a graph injected under
    `COMPILED_FN`, continues in a `RESUME_AT` function after a graph break, and Dynamo names a parameter's source
    with `PARAMETER_SOURCE`; each helper the seam stands in for is one `DYNAMO_UTILS` has."""
    script = f"""
import torch
from torchair_ref import _torch
for name in {accessors(warm=False)!r}:
    if name != "cache_entries":
        getattr(_torch, name)()
sources = []
def backend(gm, example_inputs):
    sources.extend(n.meta["grapharg"].source.name for n in gm.graph.nodes if n.op == "placeholder")
    return gm
lin = torch.nn.Linear(2, 2)
def whole(x):
    return lin(x) + 1
def broken(x):
    y = x + 1
    torch._dynamo.graph_break()
    return y * 2
torch.compile(whole, backend=backend)(torch.ones(2))
torch.compile(broken, backend=backend)(torch.ones(2))
names = set(_torch.cache_entries(whole.__code__)[0].code.co_names)
assert any(n.startswith(_torch.COMPILED_FN) for n in names), names
names = set(_torch.cache_entries(broken.__code__)[0].code.co_names)
assert any(n.startswith(_torch.RESUME_AT) for n in names), names
assert any(_torch.PARAMETER_SOURCE in s for s in sources), sources
import importlib
utils = importlib.import_module(_torch.DYNAMO_UTILS)
assert all(hasattr(utils, n) for n in vars(_torch.dynamo_utils_stand_in())), "a stand-in for a helper Dynamo lacks"
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout + out.stderr[-3000:]
