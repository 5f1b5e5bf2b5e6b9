"""Tests of the conformance suite's own machinery: clause registry, the implementation switch, the path oracle, and
the pytest wiring (header, JSON results, known divergences); the divergence lists themselves (IMPL-5) in
test_known_divergences.py."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from torchair_conformance import clauses, impl, oracle

ROOT = Path(__file__).resolve().parents[2]

SPEC_SAMPLE = textwrap.dedent("""\
    # SPEC
    ## 0. Things
    - AB-1 First clause
      continues here.
    - AB-2 Second clause
    ## 5. Later
    - XY-1 Not checked
""")


def test_parse_spec_reads_ids_and_sections():
    parsed = clauses.parse_spec(SPEC_SAMPLE)
    assert [(c.id, c.section) for c in parsed] == [("AB-1", 0), ("AB-2", 0), ("XY-1", 5)]
    assert parsed[0].summary == "First clause"


def test_parse_spec_rejects_duplicate_ids():
    with pytest.raises(ValueError, match="AB-1"):
        clauses.parse_spec(SPEC_SAMPLE + "- AB-1 again\n")


def test_coverage_report_flags_gaps_only_in_checked_sections():
    parsed = clauses.parse_spec(SPEC_SAMPLE)
    _, gaps, unknown = clauses.coverage_report(parsed, {"AB-1": ["t.py::test_a"], "ZZ-9": ["t.py::test_z"]})
    assert gaps == ["AB-2"]
    assert unknown == ["ZZ-9"]


def test_packaged_clause_copy_matches_spec():
    spec = clauses.find_spec()
    if spec is None:
        pytest.skip("no SPEC.md next to the repository (set TORCHAIR_SPEC)")
    assert clauses.read_packaged() == clauses.parse_spec(spec.read_text()), (
        "torchair_conformance/SPEC_clauses.txt is stale: run `python -m torchair_conformance clauses --write-packaged`")


def test_every_clause_of_sections_0_to_4_has_a_test():
    found, _ = clauses.load_clauses()
    report, gaps, unknown = clauses.coverage_report(found, clauses.tests_by_clause())
    assert not gaps and not unknown, report


def test_clauses_command_exits_zero(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "torchair_conformance", "clauses"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for clause, tests in clauses.tests_by_clause().items():
        assert clause in proc.stdout and any(t in proc.stdout for t in tests), (clause, tests, proc.stdout[-3000:])


def test_selected_name_precedence():
    assert impl.selected_name("a", {impl.ENV_VAR: "b"}) == "a"
    assert impl.selected_name(None, {impl.ENV_VAR: "b"}) == "b"
    assert impl.selected_name(None, {}) == "torchair_ref"


def test_unknown_module_is_an_implementation_error():
    with pytest.raises(impl.ImplementationError, match="no_such_module_xyz"):
        impl.resolve("no_such_module_xyz")


def test_module_without_the_surface_is_rejected():
    with pytest.raises(impl.ImplementationError, match="missing"):
        impl.resolve("json")


def test_torch_npu_is_imported_first_only_for_torchair(tmp_path):
    (tmp_path / "torch_npu.py").write_text("import builtins\nbuiltins.ORDER = ['torch_npu']\n")
    (tmp_path / "torchair").mkdir()
    (tmp_path / "torchair" / "__init__.py").write_text("import builtins\nbuiltins.ORDER.append('torchair')\n")
    (tmp_path / "other.py").write_text("")
    code = ("import sys, builtins; from torchair_conformance import impl; impl.load('other'); "
            "print('npu' if 'torch_npu' in sys.modules else 'no-npu'); impl.load('torchair'); print(builtins.ORDER)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["no-npu", "['torch_npu',", "'torchair']"], out.stdout + out.stderr


def test_oracle_path_formula():
    info = oracle.model_info("Net", "Net()", "a=1", True, ["gecache"], 0)
    assert info == "Net_dynamic_gecache_" + hashlib.md5(b"Net()a=1|npu_deterministic_level=0").hexdigest()
    assert oracle.model_info("Net", "Net()", "a=1", True, [], 1).endswith(
        hashlib.md5(b"Net()a=1|npu_deterministic_level=1").hexdigest())
    assert "torch_npu" in sys.modules or oracle.deterministic_level() == 0
    assert oracle.options_string(({"mode": "m", "x": "2"}, {"x": "1", "g": "3"})) == "x=2,g=3,mode=m"
    assert oracle.dist_level(2, 1, None, 0, None) == "world2global_rank1_tp_rank0"
    assert oracle.dist_level(1, 0, 5, None, 3) == "pp_rank3"
    assert oracle.root_for("", None, "/c") == "/c/.torchair_cache"
    assert oracle.root_for("rel", "/h", "/c") == "/c/rel"
    assert oracle.root_for(None, "/h", "/c") == "/h"
    assert oracle.cache_file("/r", "I", "", "f") == os.path.realpath("/r/I/f/compiled_module")


def _run_suite(tmp_path, *args, cwd=ROOT):
    """The suite's test_impl.py in a fresh pytest on the reference with ``args``; (process, JSON results or None)."""
    env = {k: v for k, v in os.environ.items() if k != impl.ENV_VAR}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "impl"), str(ROOT), env.get("PYTHONPATH", "")])
    json_path = tmp_path / "out.json"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(ROOT / "torchair_conformance" / "test_impl.py"), "-p", "no:cacheprovider",
         "--hypothesis-profile=dev", f"--conformance-json={json_path}", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    return proc, (json.loads(json_path.read_text()) if json_path.exists() else None)


@pytest.mark.clause("IMPL-5")
def test_header_json_and_known_divergences(tmp_path):
    listing = tmp_path / "div.txt"
    listing.write_text("test_impl.py::test_surface_is_present | IMPL-1 | AssertionError: . | a.py:1 | pretend\n"
                       "test_nothing.py::test_gone | CC-1 | AssertionError: . | a.py:1 | stale on purpose\n")
    proc, document = _run_suite(tmp_path, "-k", "surface or declaration", f"--known-divergences-file={listing}")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "conformance: implementation torchair_ref" in out and "hypothesis profile dev" in out, out[-3000:]
    assert "stale known divergences" in out and "test_nothing.py::test_gone" in out, out[-3000:]
    records = {r["test"].split("::")[-1]: r for r in document["tests"]}
    assert records["test_surface_is_present"]["outcome"] == "xpassed"
    assert records["test_surface_is_present"]["clauses"] == ["IMPL-1"]
    assert records["test_conformance_declaration_is_well_formed"]["outcome"] == "passed"
    assert document["implementation"] == "torchair_ref" and "torch" in document["versions"]
    assert document["label"] == "", "IMPL-4: only an adapter that runs something other than itself labels its results"
    assert document["stale_divergences"] and all(r["implementation"] == "torchair_ref" for r in document["tests"])

    proc, document = _run_suite(tmp_path, "-k", "surface or declaration", f"--known-divergences-file={listing}",
                                "--known-divergences=skip")
    records = {r["test"].split("::")[-1]: r for r in document["tests"]}
    assert records["test_surface_is_present"]["outcome"] == "skipped", proc.stdout[-2000:]


def test_clause_option_selects_the_tests_of_those_clauses(tmp_path):
    proc, document = _run_suite(tmp_path, "--clause", "impl-3", "--clause=IMPL-1,Impl-3", cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    marked = clauses.tests_by_clause(ROOT / "torchair_conformance")
    wanted = {t.split("::")[-1] for t in marked["IMPL-1"] + marked["IMPL-3"] if t.startswith("test_impl.py::")}
    ran = {r["test"].split("::")[-1].split("[")[0] for r in document["tests"]}
    assert ran == wanted, f"--clause IMPL-1,IMPL-3 ran {sorted(ran)}, the tests of those clauses are {sorted(wanted)}"
    assert document["selected_clauses"] == ["IMPL-1", "IMPL-3"]
    assert "deselected" in out and "clauses IMPL-1, IMPL-3 only" in out, out[-3000:]


def test_unknown_clause_is_a_usage_error_naming_it(tmp_path):
    proc, _ = _run_suite(tmp_path, "--clause", "IMPL-1,XX-99", cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR, out[-3000:]
    assert "--clause XX-99" in out and "no such SPEC clause ID" in out, out[-3000:]


def test_clause_ids_match_in_any_case_and_unknown_ones_get_the_closest():
    known = {"CC-15", "CC-16", "IMPL-1"}
    assert clauses.match_ids(["cc-15", " CC-15", "impl-1"], known) == (["CC-15", "IMPL-1"], [])
    assert clauses.match_ids(["cc15", "CC_16", "zz-zzz"], known) == (
        [], ["cc15 (did you mean CC-15?)", "CC_16 (did you mean CC-16?)", "zz-zzz"])
    from torchair_conformance.conftest import parse_clause_selection

    assert parse_clause_selection(["cc-16,cc-15"], known, "SPEC.md") == ["CC-15", "CC-16"]
    with pytest.raises(pytest.UsageError, match=r"--clause cc15 \(did you mean CC-15\?\): no such SPEC clause ID"):
        parse_clause_selection(["cc15"], known, "SPEC.md")
