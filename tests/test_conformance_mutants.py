"""The conformance suite has teeth: each mutant (``tests/mutants``, one clause broken) fails a test of that clause.

Each mutant is run against the tests of the clause it breaks (``--clause ID``), one suite session per mutant, in
its own folder (so that a mutant neither replays the examples that failed the reference, or another mutant, nor
leaves its own in the repository's hypothesis database). The sessions run in the background from the end of
collection (``tests/suite_sessions.py``); each parametrized test waits for its own mutant's session and asserts on
it.
"""

from __future__ import annotations

import os

import pytest

from tests.suite_sessions import MUTANTS_DIR, SuiteRun

# mutant name -> the SPEC clause it breaks (the suite runs only that clause's tests against it)
MUTANTS = {
    "accepts_functions": "CC-2",
    "backend_config_unchecked": "CC-4",
    "backend_copies_config": "CF-4",
    "broken_cache_raises": "CC-17",
    "config_identity_equality": "CF-2",
    "declaration_without_torch": "IMPL-2",
    "decompositions_ignored": "CC-19",
    "default_reduce_overhead": "CF-1",
    "eager_mkdir": "CC-6",
    "export_air_without_rank": "EX-4",
    "export_atc_nodes_topology": "EX-5",
    "export_bias_dropped": "EX-11",
    "export_byteswapped": "EX-6",
    "export_data_not_reindexed": "EX-6",
    "export_dotted_files": "EX-6",
    "export_flags_in_options": "CF-3",
    "export_follows_symlink": "EX-2",
    "export_leaves_dynamo_config": "EX-10",
    "export_name_full_path": "EX-1",
    "export_net_output_unwired": "EX-7",
    "export_no_module_stack": "EX-9",
    "export_no_options_json": "EX-3",
    "export_pbtxt_without_dtypes": "EX-8",
    "export_per_weight": "EX-6",
    "export_proto_dtype": "EX-6",
    "extra_root_level": "CC-8",
    "foreign_owner_ok": "CC-3",
    "ge_cache_tag_as_documented": "CC-9",
    "grad_outputs": "CC-16",
    "keyword_args_dropped": "CC-18",
    "logger_adapter": "IMPL-1",
    "mode_0644": "CC-11",
    "no_deterministic_suffix": "CC-8",
    "no_ge_cache_warning": "CC-5",
    "no_input_check": "CC-15",
    "no_save_log": "CC-20",
    "path_per_instance": "CC-10",
    "positional_config": "CC-1",
    "readable_deletes_broken": "RC-1",
    "readable_file_0644": "RC-3",
    "readable_no_rule": "RC-2",
    "rng_allowed": "CC-13",
    "root_at_cache_compile": "CC-7",
    "silent_recompile": "CC-12",
    "warm_traces": "CC-14",
}

# The CC-3 test gives a directory to another user, which only root can do.
NEEDS_ROOT = {"foreign_owner_ok"}


def _mutant_run(name: str) -> SuiteRun:
    return SuiteRun(f"mutant-{name}", f"torchair_ref_mutant_{name}", (MUTANTS_DIR / name,), (MUTANTS[name],),
                    own_folder=True)


def _param(name: str):
    if name in NEEDS_ROOT and os.geteuid() != 0:
        return pytest.param(name, marks=pytest.mark.skip(
            reason=f"the {MUTANTS[name]} test needs root to give a directory to another user"))
    return pytest.param(name, marks=pytest.mark.suite_session(_mutant_run(name)))


def test_every_mutant_folder_is_registered():
    folders = {p.name for p in MUTANTS_DIR.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))}
    assert folders == set(MUTANTS), f"unregistered: {folders - set(MUTANTS)}; missing: {set(MUTANTS) - folders}"


@pytest.mark.slow
@pytest.mark.parametrize("name", [_param(name) for name in sorted(MUTANTS)])
def test_suite_rejects_mutant(name, suite_session):
    clause = MUTANTS[name]
    code, document, output = suite_session
    assert code == pytest.ExitCode.TESTS_FAILED, f"the suite did not fail mutant {name} (exit {code}):\n{output}"
    failed = [(r["test"], r["clauses"]) for r in document["tests"] if r["outcome"] in ("failed", "error")]
    assert failed, f"exit 1 but no failed record for mutant {name}:\n{output}"
    assert all(clause in clauses for _, clauses in failed), (
        f"mutant {name} breaks {clause}, but the failing tests check {failed}:\n{output}")
    assert document["implementation"] == f"torchair_ref_mutant_{name}"
    assert document["selected_clauses"] == [clause]
