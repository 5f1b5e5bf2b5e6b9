"""A clone is self-contained (issue 21): the contract lives in `docs/`, in step with the project's shared copy, the
packaged clause list comes from `docs/SPEC.md`, and the READMEs link only files the repository has."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from torchair_conformance import clauses

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
#: the contract's files the repository carries, each a byte-identical copy of the shared one
CONTRACT = ("SPEC.md", "GE_IR.md")
#: the pages whose relative links must resolve inside the clone
PAGES = ("README.md", "torchair_conformance/README.md", "docs/reliability.md", "docs/overhead.md")


@pytest.mark.parametrize("name", CONTRACT)
def test_docs_copy_of_the_contract_is_the_shared_one(name: str) -> None:
    if not (SHARED / name).is_file():
        pytest.skip(f"no {SHARED / name}: a plain clone has only docs/{name}, nothing to keep in step with")
    assert (ROOT / "docs" / name).read_bytes() == (SHARED / name).read_bytes(), (
        f"docs/{name} differs from {SHARED / name}: copy the shared one over it (cp {SHARED / name} docs/), then "
        f"`python -m torchair_conformance clauses --write-packaged` if SPEC changed")


def test_spec_is_found_in_docs_before_the_packaged_copy(tmp_path: Path) -> None:
    assert clauses.find_spec({}) == clauses.REPO_SPEC == ROOT / "docs" / "SPEC.md"
    other = tmp_path / "SPEC.md"
    other.write_text("## 0. X\n- AB-1 only\n", encoding="utf-8")
    assert clauses.find_spec({clauses.SPEC_ENV_VAR: str(other)}) == other
    assert clauses.load_clauses({clauses.SPEC_ENV_VAR: str(other)})[0] == [clauses.Clause("AB-1", 0, "only")]
    with pytest.raises(FileNotFoundError, match="TORCHAIR_SPEC"):
        clauses.find_spec({clauses.SPEC_ENV_VAR: str(tmp_path / "missing.md")})


def test_packaged_clause_list_is_generated_from_docs_spec() -> None:
    spec = (ROOT / "docs" / "SPEC.md").read_text(encoding="utf-8")
    assert clauses.PACKAGED.read_text(encoding="utf-8") == clauses.render_packaged(clauses.parse_spec(spec)), (
        "torchair_conformance/SPEC_clauses.txt is stale: run `python -m torchair_conformance clauses --write-packaged`")


@pytest.mark.parametrize("page", PAGES)
def test_pages_link_only_what_a_clone_has(page: str) -> None:
    path = ROOT / page
    text = path.read_text(encoding="utf-8")
    assert "../shared" not in text and "shared/SPEC" not in text and "shared/GE_IR" not in text, (
        f"{page} sends readers outside the repository; link docs/ instead")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        assert (path.parent / target).exists(), f"{page} links {target}, which the repository does not have"
