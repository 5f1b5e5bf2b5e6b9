"""The conformance suite has teeth: each mutant (``tests/mutants``, one clause broken) fails a test of that clause."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Sequence

import pytest

ROOT = Path(__file__).resolve().parent.parent
MUTANTS_DIR = Path(__file__).resolve().parent / "mutants"

# mutant name -> (the clause it breaks, the test family (module) the suite runs against it)
MUTANTS = {
    "accepts_functions": ("CC-2", "test_paths"),
    "backend_config_unchecked": ("CC-4", "test_backend_config"),
    "broken_cache_raises": ("CC-17", "test_broken_cache"),
    "config_identity_equality": ("CF-2", "test_config"),
    "eager_mkdir": ("CC-6", "test_paths"),
    "export_air_without_rank": ("EX-4", "test_export_multi_rank"),
    "export_atc_nodes_topology": ("EX-5", "test_export_multi_rank"),
    "export_byteswapped": ("EX-6", "test_export_weights"),
    "export_data_not_reindexed": ("EX-6", "test_export_weights"),
    "export_dotted_files": ("EX-6", "test_export_weights"),
    "export_flags_in_options": ("CF-3", "test_config"),
    "export_follows_symlink": ("EX-2", "test_export_layout"),
    "export_name_full_path": ("EX-1", "test_export_layout"),
    "export_no_options_json": ("EX-3", "test_export_layout"),
    "export_per_weight": ("EX-6", "test_export_weights"),
    "export_proto_dtype": ("EX-6", "test_export_weights"),
    "extra_root_level": ("CC-8", "test_paths"),
    "foreign_owner_ok": ("CC-3", "test_paths"),
    "grad_outputs": ("CC-16", "test_inputs_outputs"),
    "mode_0644": ("CC-11", "test_paths"),
    "no_input_check": ("CC-15", "test_inputs_outputs"),
    "no_deterministic_suffix": ("CC-8", "test_paths"),
    "no_save_log": ("CC-20", "test_paths"),
    "positional_config": ("CC-1", "test_paths"),
    "readable_deletes_broken": ("RC-1", "test_readable"),
    "readable_file_0644": ("RC-3", "test_readable"),
    "readable_no_rule": ("RC-2", "test_readable"),
    "rng_allowed": ("CC-13", "test_rng"),
    "silent_recompile": ("CC-12", "test_single_trace"),
    "warm_traces": ("CC-14", "test_warm_start"),
}


def run_suite(impl: str, expression: str, json_path: Path, *extra_path: Path, profile: str = "dev",
              extra_args: Sequence[str] = ()) -> tuple:
    """``python -m pytest conformance --impl IMPL -x -q [-k EXPR]``; returns (exit code, JSON document, output)."""
    env = dict(os.environ)
    path = [str(p) for p in extra_path] + [str(MUTANTS_DIR / "_shared"), str(ROOT / "impl"), str(ROOT)] + [
        p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(path)
    env.pop("TORCHAIR_CONFORMANCE_IMPL", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(ROOT / "conformance"), "--impl", impl, "-x", "-q",
         *(["-k", expression] if expression else []), "-p", "no:cacheprovider", "-p", "no:warnings",
         f"--hypothesis-profile={profile}", f"--conformance-json={json_path}", *extra_args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800,
    )
    document = json.loads(json_path.read_text()) if json_path.exists() else None
    return proc.returncode, document, proc.stdout[-4000:] + proc.stderr[-4000:]


def test_every_mutant_folder_is_registered():
    folders = {p.name for p in MUTANTS_DIR.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))}
    assert folders == set(MUTANTS), f"unregistered: {folders - set(MUTANTS)}; missing: {set(MUTANTS) - folders}"
    assert len(MUTANTS) >= 12


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_suite_rejects_mutant(name, tmp_path):
    clause, family = MUTANTS[name]
    if name == "foreign_owner_ok" and os.geteuid() != 0:
        pytest.skip("the CC-3 test needs root to give a directory to another user")
    code, document, output = run_suite(f"torchair_ref_mutant_{name}", family, tmp_path / "results.json",
                                       MUTANTS_DIR / name)
    assert code == pytest.ExitCode.TESTS_FAILED, f"the suite did not fail mutant {name} (exit {code}):\n{output}"
    failed = [r for r in document["tests"] if r["outcome"] in ("failed", "error")]
    assert failed, f"exit 1 but no failed record for mutant {name}:\n{output}"
    assert any(clause in r["clauses"] for r in failed), (
        f"mutant {name} breaks {clause}, but the failing tests check {[(r['test'], r['clauses']) for r in failed]}:\n"
        f"{output}")
    assert document["implementation"] == f"torchair_ref_mutant_{name}"
