"""The clause registry: clause IDs parsed from SPEC.md, the tests that name them, and the coverage report.

SPEC.md is found through ``$TORCHAIR_SPEC``, else ``docs/SPEC.md`` in the repository (the contract's copy that
travels with every clone), else the copy packaged as ``torchair_conformance/SPEC_clauses.txt`` (so a pip-installed
suite, which has no ``docs/``, still knows the clauses). The packaged copy is one clause per line,
``ID<TAB>section<TAB>summary``; ``python -m torchair_conformance clauses --write-packaged`` regenerates it from SPEC.md.

Tests are found statically (by reading the test modules with ``ast``), so the report needs neither an
implementation nor torch.
"""

from __future__ import annotations

import ast
import difflib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Clause",
    "SPEC_ENV_VAR",
    "PACKAGED",
    "REPO_SPEC",
    "CHECKED_SECTIONS",
    "find_spec",
    "parse_spec",
    "load_clauses",
    "read_packaged",
    "render_packaged",
    "tests_by_clause",
    "coverage_report",
    "match_ids",
]

SPEC_ENV_VAR = "TORCHAIR_SPEC"
PACKAGE_DIR = Path(__file__).resolve().parent
PACKAGED = PACKAGE_DIR / "SPEC_clauses.txt"
#: the contract as the repository carries it (a byte-identical copy of the project's shared SPEC.md)
REPO_SPEC = PACKAGE_DIR.parent / "docs" / "SPEC.md"
#: the tests of the suite's own machinery in a checkout (they check IMPL-5, a clause about the suite itself)
REPO_SUITE_TESTS = PACKAGE_DIR.parent / "tests" / "suite"
# The sections this suite is responsible for (IMPL, CF, CC, RC, EX): a clause there with no test fails the report.
CHECKED_SECTIONS = (0, 1, 2, 3, 4)

_SECTION = re.compile(r"^##\s+(\d+)\.")
_CLAUSE = re.compile(r"^- ([A-Z]+-\d+)\s+(.*)$")


@dataclass(frozen=True)
class Clause:
    """One SPEC clause: its ID, the section number it sits in and the first line of its text."""

    id: str
    section: int
    summary: str


def find_spec(environ: Mapping[str, str] | None = None) -> Path | None:
    """Where SPEC.md is: ``$TORCHAIR_SPEC``, else ``<repo root>/docs/SPEC.md``; None when neither exists (an
    installed suite: then the packaged copy is used)."""
    environ = os.environ if environ is None else environ
    if environ.get(SPEC_ENV_VAR):
        path = Path(environ[SPEC_ENV_VAR])
        if not path.is_file():
            raise FileNotFoundError(f"${SPEC_ENV_VAR} names {path}, which is not a file")
        return path
    return REPO_SPEC if REPO_SPEC.is_file() else None


def parse_spec(text: str) -> list[Clause]:
    """Every ``- ID text`` bullet of SPEC.md, in order, with the section (``## N.``) it belongs to."""
    clauses: list[Clause] = []
    section = -1
    for line in text.splitlines():
        heading = _SECTION.match(line)
        if heading:
            section = int(heading.group(1))
            continue
        match = _CLAUSE.match(line)
        if match:
            clauses.append(Clause(match.group(1), section, match.group(2).strip()))
    ids = [c.id for c in clauses]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"SPEC defines these clause IDs more than once: {duplicates}")
    return clauses


def render_packaged(clauses: Iterable[Clause]) -> str:
    """The packaged form: ``ID<TAB>section<TAB>summary`` lines."""
    return "".join(f"{c.id}\t{c.section}\t{c.summary}\n" for c in clauses)


def read_packaged(path: Path = PACKAGED) -> list[Clause]:
    """Clauses from the packaged copy."""
    clauses = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            cid, section, summary = line.split("\t", 2)
            clauses.append(Clause(cid, int(section), summary))
    return clauses


def load_clauses(environ: Mapping[str, str] | None = None) -> tuple[list[Clause], str]:
    """The clauses and where they came from (a SPEC.md path, or the packaged copy)."""
    spec = find_spec(environ)
    if spec is not None:
        return parse_spec(spec.read_text(encoding="utf-8")), str(spec)
    return read_packaged(), str(PACKAGED)


def _clause_ids_of(decorators: Sequence[ast.expr]) -> list[str]:
    ids: list[str] = []
    for dec in decorators:
        if isinstance(dec, ast.Call) and _dotted(dec.func).endswith("mark.clause"):
            ids += [a.value for a in dec.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return ids


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


def _module_marks(tree: ast.Module) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            value = node.value
            items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
            return _clause_ids_of(items)
    return []


def tests_by_clause(test_dir: Path | None = None) -> dict[str, list[str]]:
    """Clause ID -> test node ids (``file::Class::test``) that carry ``@pytest.mark.clause(ID, ...)``: in
    ``test_dir``, else in the suite and, in a checkout, the tests of the suite's own machinery (``tests/suite``,
    named ``tests/suite/file::test``: IMPL-5 is a clause about the suite itself)."""
    if test_dir is None:
        found = tests_by_clause(PACKAGE_DIR)
        if REPO_SUITE_TESTS.is_dir():
            for cid, names in tests_by_clause(REPO_SUITE_TESTS).items():
                found.setdefault(cid, []).extend(f"tests/suite/{name}" for name in names)
        return found
    found = {}
    for path in sorted(test_dir.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        module_ids = _module_marks(tree)

        def visit(body: Sequence[ast.stmt], prefix: str, inherited: list[str], path: Path = path) -> None:
            for node in body:
                if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                    visit(node.body, f"{prefix}{node.name}::", inherited + _clause_ids_of(node.decorator_list))
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
                    for cid in dict.fromkeys(inherited + _clause_ids_of(node.decorator_list)):
                        found.setdefault(cid, []).append(f"{path.name}::{prefix}{node.name}")

        visit(tree.body, "", module_ids)
    return found


def coverage_report(clauses: Sequence[Clause], tests: Mapping[str, Sequence[str]]) -> tuple[str, list[str], list[str]]:
    """The text report, the clauses of the checked sections with no test, and test marks naming unknown clauses."""
    lines = []
    gaps = []
    for clause in clauses:
        names = tests.get(clause.id, [])
        checked = clause.section in CHECKED_SECTIONS
        status = f"{len(names)} test(s)" if names else ("NO TEST" if checked else "no test (not in this suite)")
        lines.append(f"{clause.id:8} {status}: {clause.summary[:90]}")
        lines += [f"           {name}" for name in names]
        if checked and not names:
            gaps.append(clause.id)
    known = {c.id for c in clauses}
    unknown = sorted(cid for cid in tests if cid not in known)
    return "\n".join(lines), gaps, unknown


def match_ids(values: Iterable[str], known: Iterable[str]) -> tuple[list[str], list[str]]:
    """Clause IDs as a user types them, matched case-insensitively (``cc-15`` is CC-15): the sorted unique known
    IDs, and for each unknown value a line naming it with the closest known ID ("did you mean CC-15?")."""
    by_upper = {cid.upper(): cid for cid in known}
    found, unknown = set(), []
    for value in values:
        cid = by_upper.get(value.strip().upper())
        if cid is not None:
            found.add(cid)
            continue
        close = difflib.get_close_matches(value.strip().upper(), list(by_upper), n=1, cutoff=0.6)
        unknown.append(value.strip() + (f" (did you mean {by_upper[close[0]]}?)" if close else ""))
    return sorted(found), unknown
