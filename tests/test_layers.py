"""The architecture as a test: which layer of the reference and of the suite may import which, no module circles, and
what crosses between the products (where torch's private names may appear is tests/reference/test_torch_seam.py).

Read from the source with `ast` (nothing is imported), over every module of the products (`impl/*` and
`torchair_conformance`):

- an import inside a function counts like one at the top, so a lazy import cannot hide an arrow that runs back up;
- `from X import name` counts as an import of the module that defines `name`: the submodule `X.name` if there is one,
  else, where `X` (a package's face or a module) takes `name` from another module at its top, that module (followed
  through re-exports), else `X` itself; so a name defined in a package's `__init__` counts as importing the face;
- every arrow points to the importer's own layer or one below, and no modules import each other, directly or round a
  longer circle; so every chain of imports runs down too (the layers hold transitively).
"""
from __future__ import annotations

import ast
import fnmatch
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
IMPL = ROOT / "impl"
REF = IMPL / "torchair_ref"
SUITE = ROOT / "torchair_conformance"
EXECUTOR = IMPL / "ge_executor"
CPU_ADAPTER = IMPL / "torchair_cpu"
PACKAGES = [*sorted(p.parent for p in IMPL.glob("*/__init__.py")), SUITE]

# torchair_ref's layers, lowest first, by a module's path under the package: a module may import its own layer and
# the ones below, never one above. `__init__` (the public surface, resolved lazily) is the top.
LAYERS = [
    {"errors", "_version", "_torch", "_files", "_lazy", "_refs", "_warn", "config"},
    {"compilers.*"},
    {"backend"},
    {"inference.*", "export.*"},
    {"__init__"},
]

# The suite's layers, lowest first (derived from what the code does, 2026-11-25):
# - the vocabulary every part shares: the one switch (`impl`), the fresh-process protocol (`process`), the models,
#   profiles, clauses, the suite's own GE IR reader, its error base;
# - the test machinery built on it: strategies, harness, assertions, the worker programs, the zoo;
# - the report, in four steps: documents (the versioned results and history files, CANN versions) < the pure model
#   (legs, gate, matrix, verdicts) < the renderer (context, charts, outputs, HTML) < its command line;
# - the benchmarks, which write their results as the report's documents;
# - what runs them all: the tests themselves and their conftest, the nightly, the NPU preflight; then `__main__`.
SUITE_LAYERS = [
    {"__init__", "errors", "clauses", "profiles", "process", "ge_ir", "impl", "models", "export_zoo", "oracle",
     "divergences", "guard_models"},
    {"zoo.*", "strategies", "exports", "harness", "assertions", "execute", "workers.*"},
    {"report.__init__", "report.versioned", "report.results", "report.history", "report.cann", "report.units",
     "report.stats", "report.outdir", "report.merge"},
    {"report.legs", "report.gate", "report.matrix", "report.changes", "report.verdict", "report.divergences",
     "report.model"},
    {"report.charts", "report.context", "report.outputs", "report.render"},
    {"report.cli"},
    {"bench.*"},
    {"conftest", "test_*", "nightly", "nightly_matrix", "npu_preflight"},
    {"__main__"},
]


def _modules(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _module_name(path: Path) -> str:
    parts = path.relative_to(IMPL if IMPL in path.parents else ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _files() -> dict[str, Path]:
    """Every module of the products by its dotted name (a package by its own name, for its `__init__`)."""
    return {_module_name(path): path for package in PACKAGES for path in _modules(package)}


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _base(module: str, node: ast.ImportFrom) -> str:
    """The absolute name of the module a `from ... import` reads from (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if _files()[module].name == "__init__.py" else module.split(".")[:-1]
    package = package[: len(package) - node.level + 1]
    return ".".join(package + ([node.module] if node.module else []))


def _defining(base: str, name: str, seen: frozenset[tuple[str, str]] = frozenset()) -> str | None:
    """The project module that `from base import name` really imports, or None outside the products."""
    files = _files()
    if f"{base}.{name}" in files:
        return f"{base}.{name}"
    if base not in files:
        return None
    if (base, name) in seen:
        return base
    for node in _tree(files[base]).body:  # a module (a package face) that takes `name` from another one: follow it
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    return _defining(_base(base, node), alias.name, seen | {(base, name)}) or base
    return base


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every module name `path` imports as written (absolute; relative imports resolved), at any depth."""
    module = _module_name(path) if path.is_relative_to(IMPL) or path.is_relative_to(SUITE) else ""
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, node) if module else node.module or ""
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names] or [(node.lineno, base)]
    return found


@cache
def _graph() -> dict[str, list[tuple[int, str]]]:
    """Module -> (line, project module it imports), with `from X import name` resolved to the defining module."""
    files = _files()
    graph: dict[str, list[tuple[int, str]]] = {}
    for module, path in files.items():
        arrows = []
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Import):
                arrows += [(node.lineno, alias.name) for alias in node.names if alias.name in files]
            elif isinstance(node, ast.ImportFrom):
                base = _base(module, node)
                targets = [_defining(base, alias.name) for alias in node.names]
                arrows += [(node.lineno, t) for t in targets if t is not None and t != module]
        graph[module] = arrows
    return graph


def _rank(relative: str, layers: list[set[str]], where: str) -> int:
    for rank, members in enumerate(layers):
        if any(fnmatch.fnmatchcase(relative, pattern) for pattern in members):
            return rank
    raise AssertionError(f"{where}{relative} is in no layer of tests/test_layers.py: add it to its layers")


def _ranked(package: str, layers: list[set[str]]) -> Iterator[tuple[str, int]]:
    """(module, layer) for each module of a package, named in the layers by its path (`report.cli`, `zoo.__init__`)."""
    folder = _files()[package].parent
    for module, path in _files().items():
        if module == package or module.startswith(package + "."):
            yield module, _rank(".".join(path.relative_to(folder).with_suffix("").parts), layers, f"{package}/")


def _upward(package: str, layers: list[set[str]]) -> list[str]:
    rank = dict(_ranked(package, layers))
    upward = []
    for module, own in rank.items():
        for line, target in _graph()[module]:
            if target in rank and rank[target] > own:
                upward.append(f"{_files()[module].relative_to(ROOT)}:{line} imports {target} "
                              f"(layer {rank[target]} > {own})")
    return upward


def cycles() -> list[list[str]]:
    """The circles of the module graph (strongly connected sets of more than one module), by Tarjan's algorithm."""
    graph = {m: sorted({t for _, t in arrows}) for m, arrows in _graph().items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    work.append((child, iter(graph[child])))
                elif child in stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                circle = []
                while True:
                    member = stack.pop()
                    circle.append(member)
                    if member == node:
                        break
                if len(circle) > 1:
                    found.append(sorted(circle))
    return found


def test_every_module_has_a_layer() -> None:
    list(_ranked("torchair_ref", LAYERS))
    list(_ranked("torchair_conformance", SUITE_LAYERS))


def test_no_arrow_runs_back_up_inside_the_reference() -> None:
    upward = _upward("torchair_ref", LAYERS)
    assert not upward, "imports from a higher layer:\n" + "\n".join(upward)


def test_no_arrow_runs_back_up_inside_the_suite() -> None:
    upward = _upward("torchair_conformance", SUITE_LAYERS)
    assert not upward, "imports from a higher layer:\n" + "\n".join(upward)


def test_no_modules_import_each_other() -> None:
    found = cycles()
    assert not found, "modules that import each other (round a circle):\n" + "\n".join(" <-> ".join(c) for c in found)


def test_from_import_resolves_to_the_defining_module() -> None:
    """The resolution the layer checks rely on: a name taken through a package face counts as its defining module."""
    assert _defining("torchair_ref.export", "ge_build") == "torchair_ref.export.ge_build"
    assert _defining("torchair_ref.export.ge_build", "Value") == "torchair_ref.export.op_builder"
    assert _defining("torchair_ref", "__version__") == "torchair_ref._version"
    assert _defining("torch", "nn") is None


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
