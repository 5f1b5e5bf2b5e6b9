"""The architecture as a test: which layer of the reference may import which, and what crosses between the products
(where torch's private names may appear is tests/reference/test_torch_seam.py).

Read from the source with `ast` (nothing is imported): an import inside a function counts like one at the top, so a
lazy import cannot hide an arrow that runs back up.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
IMPL = ROOT / "impl"
REF = IMPL / "torchair_ref"
SUITE = ROOT / "torchair_conformance"
EXECUTOR = IMPL / "ge_executor"
CPU_ADAPTER = IMPL / "torchair_cpu"

# torchair_ref's layers, lowest first: a module may import its own layer and the ones below, never one above.
LAYERS = [
    {"errors", "_torch", "_files", "_lazy", "_refs", "config"},
    {"compilers"},
    {"backend"},
    {"inference", "export"},
    {"__init__"},
]


def _modules(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every module name `path` imports (absolute names; relative imports resolved against its package)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    import_root = IMPL if IMPL in path.parents else ROOT
    package = ".".join(path.relative_to(import_root).parts[:-1])
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names] or [(node.lineno, base)]
    return found


def _top(path: Path) -> str:
    """The first component of a module's path under torchair_ref (`inference`, `backend`, `__init__`...)."""
    rel = path.relative_to(REF).parts
    return rel[0].removesuffix(".py")


def _layer(name: str) -> int:
    for rank, members in enumerate(LAYERS):
        if name in members:
            return rank
    raise AssertionError(f"torchair_ref/{name} is in no layer of tests/test_layers.py: add it to LAYERS")


def test_every_module_of_the_reference_has_a_layer() -> None:
    for path in _modules(REF):
        _layer(_top(path))


def test_no_arrow_runs_back_up_inside_the_reference() -> None:
    upward = []
    for path in _modules(REF):
        own = _layer(_top(path))
        for line, name in _imports(path):
            if name.startswith("torchair_ref."):
                target = name.split(".")[1]
                if target in {m for layer in LAYERS for m in layer} and _layer(target) > own:
                    upward.append(f"{path.relative_to(ROOT)}:{line} imports {name} (layer {_layer(target)} > {own})")
    assert not upward, "imports from a higher layer:\n" + "\n".join(upward)


# The GE executor (impl/ge_executor) is the one part shared across products, a leaf: the reference's exporter writes
# with its GE IR classes and `inspect --run` executes with it, the CPU adapter backs upstream's graph handle with it,
# the suite's EX-11 checks compute every implementation's export with it (ARCHITECTURE). It imports none of them.
@pytest.mark.parametrize("folder, forbidden", [
    (REF, ("torchair_conformance", "tests", "torchair_cpu", "torchair_npu")),
    (SUITE, ("torchair_ref", "tests", "torchair_cpu", "torchair_npu")),
    (CPU_ADAPTER, ("torchair_ref", "torchair_conformance", "tests")),
    (EXECUTOR, ("torchair_ref", "torchair_cpu", "torchair_npu", "torchair_conformance", "tests")),
], ids=["reference", "suite", "cpu-adapter", "executor"])
def test_the_products_share_nothing_but_the_contract(folder: Path, forbidden: tuple[str, ...]) -> None:
    crossing = [f"{path.relative_to(ROOT)}:{line} imports {name}" for path in _modules(folder)
                for line, name in _imports(path) if name.split(".")[0] in forbidden]
    assert not crossing, "\n".join(crossing)
