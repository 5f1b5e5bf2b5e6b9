"""docs/ge-coverage.md, generated (EX-7): the operators upstream TorchAir converts to GE ops, which of them the
reference lowers and which GE op types the project's executor runs.

Upstream's side is read statically from the torch-npu wheel's sources (no torch-npu import): every
``@register_fx_node_ge_converter(<op>)`` declaration (and the ``register_fx_node_ge_converter(<op>)(fn)`` form)
under ``torchair/_ge_concrete_graph/ge_converter/``, with its file and line. A converter whose body is only a
``raise`` (upstream's generated "is not implemented" stubs, and its "not supported" variants) converts nothing and is
counted apart; the others "convert". The GE op types a converter writes are the ``ge.<Op>(...)`` calls in its body
and in the functions of its module it calls (read statically; the ``Const``/``Cast`` that ``dtype_promote`` adds
are not among them). The reference's side is its lowering table (``torchair_ref.export.lowering.LOWERINGS``) and,
per lowering, the GE op types its code writes (``tests/ge_executor/emitted.py``'s walk); the executor's is its
kernel registry (``ge_executor.supported_op_types``).

``python -m tests.ge_coverage`` prints the page; ``--write`` writes docs/ge-coverage.md; ``--check`` exits 1 when the
committed page differs (``tests/test_ge_coverage.py`` checks it, so it cannot go stale).
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "ge-coverage.md"
CONVERTERS = Path("_ge_concrete_graph") / "ge_converter"
REGISTER = "register_fx_node_ge_converter"
#: why upstream has no converting converter for an operator the reference lowers (the "not converted" table)
NOTES = {
    "_c10d_functional.all_to_all_single.default":
        "decomposed (`_utils/__init__.py:472-476`) into `npu_define.all_to_all_single_npu`, whose converter writes "
        "`HcomAllToAllV` off an NPU (`experimental/hcom_alltoall.py:81-122`)",
    "aten._scaled_dot_product_flash_attention_for_cpu.default":
        "no converter for any SDPA operator: the reference writes the math form (`lowering/attention.py`)",
}


@dataclass
class Converter:
    """One registration of upstream's: the operator's name, where, whether it converts, the GE ops it writes."""

    op: str
    where: str
    converts: bool
    ge_ops: set[str] = field(default_factory=set)


def _op_name(node: ast.expr) -> str:
    """``torch.ops.aten.add.Tensor`` -> ``aten.add.Tensor``; ``getattr(torch.ops.aten.all, 'dimname', None)`` ->
    ``aten.all.dimname``; a builtin (``operator.add``, ``torch.sym_float``) as written."""
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "getattr" and len(node.args) >= 2:
        node = ast.Attribute(value=node.args[0], attr=node.args[1].value, ctx=ast.Load())
    return ast.unparse(node).removeprefix("torch.ops.")


def _is_stub(fn: ast.FunctionDef) -> bool:
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return len(body) == 1 and isinstance(body[0], ast.Raise)


def _ge_calls(fn: ast.AST, functions: dict[str, ast.FunctionDef], seen: set[str]) -> set[str]:
    """``ge.<Op>(...)`` calls in ``fn`` and in the module functions it calls (each followed once)."""
    found = set()
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and getattr(func.value, "id", "") == "ge" and func.attr[:1].isupper():
            found.add(func.attr)
        elif isinstance(func, ast.Name) and func.id in functions and func.id not in seen:
            seen.add(func.id)
            found |= _ge_calls(functions[func.id], functions, seen)
    return found


def upstream_converters(torchair: Path) -> list[Converter]:
    """Every converter registration under ``torchair/_ge_concrete_graph/ge_converter`` (``torchair`` is the
    extracted package), sorted by operator name."""
    root = torchair / CONVERTERS
    found: list[Converter] = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        where = (Path("torchair") / CONVERTERS / path.relative_to(root)).as_posix()
        for node in ast.walk(tree):
            targets: list[tuple[ast.expr, ast.FunctionDef | None, int]] = []
            if isinstance(node, ast.FunctionDef):
                targets = [(d.args[0], node, node.lineno) for d in node.decorator_list if isinstance(d, ast.Call)
                           and getattr(d.func, "id", "") == REGISTER and d.args]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Call) and \
                    getattr(node.func.func, "id", "") == REGISTER and node.func.args and node.args:
                targets = [(node.func.args[0], functions.get(getattr(node.args[0], "id", "")), node.lineno)]
            for target, fn, line in targets:
                if fn is None:
                    continue
                converts = not _is_stub(fn)
                ge_ops = _ge_calls(fn, functions, {fn.name}) if converts else set()
                found.append(Converter(_op_name(target), f"{where}:{line}", converts, ge_ops))
    return sorted(found, key=lambda c: (c.op, c.where))


def reference_lowerings() -> dict[str, set[str]]:
    """The reference's lowered operators by name -> the GE op types its lowering writes (Const and Cast included)."""
    from tests.ge_executor.emitted import _Walk
    from torchair_ref.export.ge_build import Builder, _target_name
    from torchair_ref.export.lowering import LOWERINGS

    walk = _Walk(Builder)
    return {_target_name(target): walk.function(lower, {}) for target, lower in LOWERINGS.items()}


def _namespace(op: str) -> str:
    """``aten``, ``prims``, ... for an operator of ``torch.ops``; ``builtin`` for Python's and torch's own functions
    on symbolic values (``operator.add``, ``math.floor``, ``torch.sym_float``, ``sym_sqrt``)."""
    first = op.split(".")[0]
    return "builtin" if "." not in op or first in ("operator", "math", "torch") else first


def _cell(ops: Iterable[str]) -> str:
    ops = sorted(ops)
    return ", ".join(f"`{o}`" for o in ops) if ops else "-"


def render(converters: list[Converter], lowered: dict[str, set[str]], kernels: set[str], wheel: str) -> str:
    """The page: heading with the count, the summary, one row per operator upstream converts, then the reference's
    lowerings of operators upstream does not convert."""
    converting = [c for c in converters if c.converts]
    by_op: dict[str, list[Converter]] = {}
    for c in converting:
        by_op.setdefault(c.op, []).append(c)
    aten = sorted(op for op in by_op if op.startswith("aten."))
    aten_lowered = [op for op in aten if op in lowered]
    stubs = sorted({c.op for c in converters if not c.converts} - set(by_op))
    namespaces: dict[str, list[int]] = {}
    for op in by_op:
        counts = namespaces.setdefault(_namespace(op), [0, 0])
        counts[0] += 1
        counts[1] += op in lowered
    lines = [
        f"# GE coverage: the reference lowers {len(aten_lowered)} of the {len(aten)} ATen operators upstream "
        "TorchAir converts",
        "",
        "Generated by `python -m tests.ge_coverage --write` (`tests/test_ge_coverage.py` fails when it is stale); "
        "do not edit. Upstream's side is read statically from the converter registry of the "
        f"{wheel} wheel (`@register_fx_node_ge_converter(...)` declarations under "
        "`torchair/_ge_concrete_graph/ge_converter/`); the reference's from its lowering table "
        "(`torchair_ref.export.lowering`, the GE op types each lowering's code writes); the executor's from its "
        "kernel registry (`impl/ge_executor/kernels/`). An operator the reference does not lower makes "
        "`dynamo_export` refuse the model with `UnsupportedOperatorError`, naming the operator and this page.",
        "",
        f"- upstream registers {len({c.op for c in converters})} operators; {len(by_op)} of them convert (the "
        f"converter's body does more than raise), {len(stubs)} only raise (\"not implemented\", \"not supported\").",
        "- per namespace, operators upstream converts / of them lowered by the reference: "
        + ", ".join(f"{ns} {n} / {k}" for ns, (n, k) in sorted(namespaces.items())) + ".",
        f"- the executor runs {len(kernels)} GE op types; every GE op type a reference lowering writes is among them "
        "(`tests/ge_executor/test_coverage.py`).",
        "- \"upstream's GE ops\": the `ge.<Op>(...)` calls in the converter and the functions of its module it calls "
        "(the `Const` and `Cast` that `dtype_promote` adds are not listed); \"executor lacks\": those of them "
        "without a kernel.",
        "",
        "## Operators upstream converts",
        "",
        "| operator | upstream converter | upstream's GE ops | reference lowers | reference's GE ops "
        "| executor lacks |",
        "|---|---|---|---|---|---|",
    ]
    for op in sorted(by_op):
        regs = by_op[op]
        upstream_ops = set().union(*(c.ge_ops for c in regs))
        ours = lowered.get(op)
        lacks = sorted((upstream_ops | (ours or set())) - kernels)
        lines.append(f"| `{op}` | {'<br>'.join(c.where for c in regs)} | {_cell(upstream_ops)} | "
                     f"{'yes' if ours is not None else 'no'} | {_cell(ours or ())} | {_cell(lacks)} |")
    extra = sorted(op for op in lowered if op not in by_op)
    lines += ["", "## Lowered by the reference, not converted by upstream", "",
              "Operators the reference lowers for which the wheel registers no converting converter (each lowering's "
              "docstring says why and what it writes instead).", "",
              "| operator | upstream | reference's GE ops |", "|---|---|---|"]
    registered = {c.op: c.where for c in converters}
    for op in extra:
        upstream = f"only raises: {registered[op]}" if op in registered else "no converter"
        lines.append(f"| `{op}` | {upstream}{'; ' + NOTES[op] if op in NOTES else ''} | {_cell(lowered[op])} |")
    return "\n".join(lines) + "\n"


def build(torchair: Path | None = None) -> str:
    """The page for the wheel's sources at ``torchair`` (default: the CPU adapter's extracted wheel, fetched once)."""
    from ge_executor import supported_op_types
    from torchair_cpu import wheel

    if torchair is None:
        torchair = wheel.ensure() / "torchair"
    version = wheel.wheel_version(torchair.parent) or wheel.DEFAULT_VERSION
    return render(upstream_converters(torchair), reference_lowerings(), set(supported_op_types()),
                  f"torch-npu {version}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.ge_coverage", description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {DOC.name}")
    parser.add_argument("--check", action="store_true", help=f"exit 1 when {DOC.name} differs")
    parser.add_argument("--torchair", type=Path, help="an extracted torchair package (default: the CPU adapter's)")
    args = parser.parse_args(argv)
    page = build(args.torchair)
    if args.write:
        DOC.write_text(page, encoding="utf-8")
    elif args.check:
        if not DOC.is_file() or DOC.read_text(encoding="utf-8") != page:
            print(f"{DOC} is stale: run python -m tests.ge_coverage --write", file=sys.stderr)
            return 1
    else:
        sys.stdout.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
