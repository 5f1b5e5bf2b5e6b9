"""The conformance suite has teeth: each mutant (``tests/mutants``, one clause broken) fails a test of that clause.

Each mutant is run against the tests of the clause it breaks (``--clause ID``), one suite session per mutant, all
of them in one pool of worker processes started when the first mutant test needs its result; each parametrized
test then waits for its own mutant's session and asserts on it.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional, Sequence, Tuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
MUTANTS_DIR = Path(__file__).resolve().parent / "mutants"

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

Outcome = Tuple[int, Optional[dict], str]


def run_suite(impl: str, json_path: Path, *extra_path: Path, clauses: Sequence[str] = (), profile: str = "dev",
              extra_args: Sequence[str] = (), cwd: Path = ROOT) -> Outcome:
    """``python -m pytest conformance --impl IMPL -x -q [--clause ID ...]`` in a fresh process in ``cwd`` (where
    hypothesis keeps its example database), with ``extra_path`` and the mutants' shared folder on PYTHONPATH;
    returns (exit code, JSON results document, output tail)."""
    env = dict(os.environ)
    path = [str(p) for p in extra_path] + [str(MUTANTS_DIR / "_shared"), str(ROOT / "impl"), str(ROOT)] + [
        p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(path)
    env.pop("TORCHAIR_CONFORMANCE_IMPL", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(ROOT / "conformance"), "--impl", impl, "-x", "-q",
         *[f"--clause={cid}" for cid in clauses], "-p", "no:cacheprovider", "-p", "no:warnings",
         f"--hypothesis-profile={profile}", f"--conformance-json={json_path}", *extra_args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=1800,
    )
    document = json.loads(json_path.read_text()) if json_path.exists() else None
    return proc.returncode, document, proc.stdout[-4000:] + proc.stderr[-4000:]


def _run_mutant(name: str, out_dir: Path) -> Outcome:
    """The suite on mutant ``name``, the tests of its clause only; in a folder of its own, so that a mutant neither
    replays the examples that failed the reference (or another mutant) nor leaves its own in the repository's
    hypothesis database."""
    work = out_dir / name
    work.mkdir()
    return run_suite(f"torchair_ref_mutant_{name}", work / "results.json", MUTANTS_DIR / name,
                     clauses=[MUTANTS[name]], cwd=work)


def _workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


@pytest.fixture(scope="session")
def mutant_runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """One suite session per selected mutant, all submitted at once to a pool of one worker per core."""
    selected = [item.callspec.params["name"] for item in request.session.items
                if getattr(item, "originalname", "") == "test_suite_rejects_mutant"]
    runnable = [name for name in selected if name not in NEEDS_ROOT or os.geteuid() == 0]
    out_dir = tmp_path_factory.mktemp("mutants")
    with concurrent.futures.ThreadPoolExecutor(max_workers=_workers()) as pool:
        futures: Dict[str, concurrent.futures.Future] = {
            name: pool.submit(_run_mutant, name, out_dir) for name in runnable}
        yield futures
        for future in futures.values():
            future.cancel()


def test_every_mutant_folder_is_registered():
    folders = {p.name for p in MUTANTS_DIR.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))}
    assert folders == set(MUTANTS), f"unregistered: {folders - set(MUTANTS)}; missing: {set(MUTANTS) - folders}"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_suite_rejects_mutant(name, mutant_runs):
    clause = MUTANTS[name]
    if name not in mutant_runs:
        pytest.skip(f"the {clause} test needs root to give a directory to another user")
    code, document, output = mutant_runs[name].result()
    assert code == pytest.ExitCode.TESTS_FAILED, f"the suite did not fail mutant {name} (exit {code}):\n{output}"
    failed = [(r["test"], r["clauses"]) for r in document["tests"] if r["outcome"] in ("failed", "error")]
    assert failed, f"exit 1 but no failed record for mutant {name}:\n{output}"
    assert all(clause in clauses for _, clauses in failed), (
        f"mutant {name} breaks {clause}, but the failing tests check {failed}:\n{output}")
    assert document["implementation"] == f"torchair_ref_mutant_{name}"
    assert document["selected_clauses"] == [clause]
