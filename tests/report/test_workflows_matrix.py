"""The nightly workflow rendered the way GitHub would (issue 21): its matrix from the real legs step, each leg's
runner, image, torch pin, cache and artifact names, the paths the leg's container sees, and the publish job's verdict
on a failed leg. The expressions are evaluated (`tests/report/workflow_expr.py`), not only linted."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.version import Version

from tests.report import workflow_expr as gh
from torchair_conformance import nightly_matrix

yaml = pytest.importorskip("yaml", reason="the workflow tests read YAML (the `test` extra's pyyaml)")

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
NIGHTLY = ROOT / ".github" / "workflows" / "nightly-ascend.yml"
PUBLISH = ROOT / ".github" / "workflows" / "nightly-publish.yml"
SCRIPT = ROOT / ".github" / "scripts" / "npu-leg.sh"
#: the runner's workspace (what GitHub gives a self-hosted runner as github.workspace and $GITHUB_WORKSPACE)
WORKSPACE = "/home/runner/_work/torchair-conformance/torchair-conformance"


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def legs_outputs(*args: str) -> dict[str, str]:
    """The legs job's outputs: what `python3 -m torchair_conformance.nightly_matrix` appends to $GITHUB_OUTPUT."""
    done = subprocess.run([sys.executable, "-m", "torchair_conformance.nightly_matrix", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    return dict(line.split("=", 1) for line in done.stdout.splitlines())


def context(workflow: dict, outputs: dict[str, str], **extra) -> dict:
    """A scheduled night: no inputs, no repository variables."""
    return {"inputs": {}, "vars": {}, "env": dict(workflow.get("env") or {}),
            "github": {"run_id": "4242", "repository": "ascend/torchair-conformance", "sha": "0" * 40,
                       "workspace": WORKSPACE, "ref": "refs/heads/main", "event_name": "schedule"},
            "needs": {"legs": {"result": "success", "outputs": outputs}}, **extra}


def rendered_legs() -> list[dict]:
    """Each nightly job as GitHub would run it: name, runs-on, env, and the `with:` of each step."""
    workflow = load(NIGHTLY)
    job = workflow["jobs"]["nightly"]
    ctx = context(workflow, legs_outputs())
    jobs = []
    for combo in gh.expand_matrix(gh.render(job["strategy"]["matrix"], ctx)):
        ctx_leg = {**ctx, "matrix": combo}
        env = {**ctx["env"], **gh.render(job.get("env") or {}, ctx_leg)}
        ctx_leg["env"] = env
        steps = {step.get("name") or step.get("uses"): gh.render(step.get("with") or {}, ctx_leg)
                 for step in job["steps"]}
        jobs.append({"name": gh.render(job["name"], ctx_leg), "runs-on": gh.render(job["runs-on"], ctx_leg),
                     "env": env, "steps": steps, "matrix": combo})
    return jobs


def step(job: dict, prefix: str) -> dict:
    (found,) = [w for name, w in job["steps"].items() if name.startswith(prefix)]
    return found


def test_the_default_matrix_is_the_legs_file_one_job_per_valid_triple() -> None:
    jobs = rendered_legs()
    table = nightly_matrix.torch_table()
    # torch-npu 2.14.0 with CANN 9.1.0 (provisional in constraints/torch-npu.json): the legs' former CANN 8.1.RC1 and
    # 8.2.RC1 go with torch-npu 2.5.1 or 2.6.0 in Ascend's release notes, not with 2.14.0
    assert [j["name"] for j in jobs] == ["A2 · CANN 9.1.0 · torch-npu 2.14.0",
                                         "A3 · CANN 9.1.0 · torch-npu 2.14.0"]
    for job in jobs:
        soc, image = job["matrix"]["soc"], job["env"]["IMAGE"]
        assert job["runs-on"] == ["self-hosted", "linux", f"ascend-{soc.lower()}"]
        assert ("-910b-" in image) == (soc == "A2") and ("-a3-" in image) == (soc == "A3"), image
        assert job["matrix"]["cann"].lower() + "-" in image.split(":")[1]
        assert job["env"]["TORCH_VERSION"] == table[job["env"]["TORCH_NPU_VERSION"]]
        assert job["env"]["TORCHAIR_SOC"] == soc and job["env"]["HYPOTHESIS_PROFILE"] == "nightly"


def test_each_leg_keeps_its_own_example_database_where_the_cache_looks() -> None:
    jobs = rendered_legs()
    keys, artifacts = set(), set()
    for job in jobs:
        leg = job["matrix"]
        db = job["env"]["TORCHAIR_HYPOTHESIS_DB_DIR"]
        restore, save = step(job, "Restore this leg's"), step(job, "Keep this leg's")
        assert restore["path"] == save["path"] == db == f".hypothesis-db/{leg['leg']}"
        assert not os.path.isabs(db), "actions/cache resolves a relative path against $GITHUB_WORKSPACE"
        assert restore["key"] == save["key"] == f"hypothesis-{leg['leg']}-4242"
        assert restore["restore-keys"] == f"hypothesis-{leg['leg']}-"
        for part in (leg["soc"], leg["cann"], leg["torch_npu"]):
            assert part in save["key"]
        keys.add(save["key"])
        artifacts.add(step(job, "Artifacts")["name"])
    assert len(keys) == len(artifacts) == len(jobs), "legs must not overwrite each other's cache or artifact"


def fake_docker(tmp_path: Path) -> Path:
    """A `docker` that records its arguments (one JSON list per call) instead of running anything."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "docker").write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(tmp_path / 'docker.calls')!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n",
        encoding="utf-8")
    (bin_dir / "docker").chmod(0o755)
    return bin_dir


def run_leg_script(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    path = f"{fake_docker(tmp_path)}{os.pathsep}{os.environ['PATH']}"
    return subprocess.run(["bash", str(SCRIPT)], env={**env, "PATH": path}, capture_output=True, text=True,
                          timeout=60)


def test_the_leg_container_sees_the_database_at_the_path_the_cache_saves(tmp_path: Path) -> None:
    job = rendered_legs()[1]
    workspace = tmp_path / "_work" / "repo" / "repo"  # stands for the runner's workspace (WORKSPACE)
    workspace.mkdir(parents=True)
    env = {k: str(v) for k, v in job["env"].items() if v is not None}
    done = run_leg_script(tmp_path, {**env, "GITHUB_WORKSPACE": str(workspace), "GITHUB_RUN_ID": "4242",
                                     "ASCEND_DEVICES": "2,3", "RUNNER_NAME": "a3-runner-2", "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    run, *cleanup = [json.loads(line) for line in (tmp_path / "docker.calls").read_text().splitlines()]
    assert run[0] == "run" and cleanup == [["rm", "-f", f"nightly-4242-{job['matrix']['leg']}"]]
    pairs = list(zip(run, run[1:]))
    assert [v for k, v in pairs if k == "--device"][:2] == ["/dev/davinci2", "/dev/davinci3"], "this runner's NPUs"
    assert ("-v", f"{workspace}:{workspace}") in pairs and ("-w", str(workspace)) in pairs
    db = f"{workspace}/{job['steps']['Restore this leg' + chr(39) + 's hypothesis example database']['path']}"
    assert ("-e", f"TORCHAIR_HYPOTHESIS_DB={db}") in pairs, "the container writes where the cache step saves"
    assert Path(db).is_dir()
    assert job["env"]["IMAGE"] in run and ("-e", "TORCH_VERSION") in pairs


def test_a_runner_without_npus_stops_with_a_message(tmp_path: Path) -> None:
    if list(Path("/dev").glob("davinci[0-9]*")):
        pytest.skip("this host has NPUs")
    job = rendered_legs()[0]
    env = {k: str(v) for k, v in job["env"].items() if v is not None}
    done = run_leg_script(tmp_path, {**env, "GITHUB_WORKSPACE": str(tmp_path), "RUNNER_NAME": "a2-runner-1"})
    assert done.returncode == 1 and "::error::runner a2-runner-1 has no /dev/davinci<N>" in done.stdout
    assert not (tmp_path / "docker.calls").exists() or "run" not in (tmp_path / "docker.calls").read_text()


def test_jobs_have_timeouts_least_privilege_and_no_always() -> None:
    for path in WORKFLOWS:
        workflow = load(path)
        text = path.read_text(encoding="utf-8")
        assert "always()" not in text, f"{path.name}: use !cancelled(), so that a cancelled run stops"
        for name, job in workflow["jobs"].items():
            assert isinstance(job.get("timeout-minutes"), int), f"{path.name} {name}: timeout-minutes"
            if "container" in job:
                assert "github.workspace" not in json.dumps(job), f"{path.name} {name}: host path in a container"
    nightly, publish = load(NIGHTLY), load(PUBLISH)
    assert nightly["permissions"] == {} and publish["permissions"] == {}
    writers = {(path.name, name) for path in (NIGHTLY, PUBLISH) for name, job in load(path)["jobs"].items()
               if "write" in (job.get("permissions") or {}).values()}
    assert writers == {("nightly-publish.yml", "publish")}, "the legs write nothing; only publish may"
    assert "concurrency" not in nightly, "a leg queued behind an offline runner must not hold the next night"
    assert publish["concurrency"]["cancel-in-progress"] is False, "pushes and deploys take turns"


def test_actions_are_pinned_by_commit_and_pip_installs_by_version() -> None:
    for path in WORKFLOWS:
        text = path.read_text(encoding="utf-8")
        env = {**(load(path).get("env") or {})}
        for line in text.splitlines():
            used = re.search(r"uses:\s*(\S+)", line)
            if used:
                assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", used.group(1)), f"{path.name}: {line.strip()}"
                assert re.search(r"# v\d+\.\d+\.\d+$", line), f"{path.name}: name the tag beside the SHA: {line}"
            install = re.search(r"pip install (.*)", line)
            if install:
                for arg in install.group(1).split():
                    arg = env.get(arg.strip('"${}'), arg)
                    assert arg.startswith("-") or "constraints/" in arg or re.fullmatch(r"[\w.-]+==[\w.+]+", arg), \
                        f"{path.name}: unpinned pip install: {line.strip()}"
    script = SCRIPT.read_text(encoding="utf-8")
    assert 'pip install "$TOX_PIN"' in script and re.fullmatch(r"tox==[\d.]+", load(NIGHTLY)["env"]["TOX_PIN"])


def test_the_torch_pin_table_follows_torch_npus_numbering() -> None:
    table = nightly_matrix.torch_table()
    assert table, "constraints/torch-npu.json is empty"
    for torch_npu, torch in table.items():
        assert Version(torch_npu).base_version == torch, f"torch-npu {torch_npu} is built for torch {torch}?"
    tox = (ROOT / "tox.ini").read_text(encoding="utf-8")
    default_npu = re.search(r"torch_npu_version = \{env:TORCH_NPU_VERSION:([^}]+)\}", tox).group(1)
    default_torch = re.search(r"torch_version = \{env:TORCH_VERSION:([^}]+)\}", tox).group(1)
    assert table[default_npu] == default_torch, "tox -e npu's defaults disagree with the table"


@pytest.mark.parametrize(("leg", "message"), [
    ({"soc": "A3", "image": "quay.io/ascend/cann:8.2.rc1-910b-ubuntu22.04-py3.11", "cann": "8.2.RC1",
      "torch_npu": "2.6.0"}, "the image's tag names A2 (910b), not A3"),
    ({"soc": "A2", "image": "quay.io/ascend/cann:8.2.rc1-910b-ubuntu22.04-py3.11", "cann": "8.1.RC1",
      "torch_npu": "2.5.1"}, "the image's tag names CANN 8.2.rc1, not 8.1.RC1"),
    ({"soc": "A2", "image": "quay.io/ascend/cann:8.2.rc1-910b-ubuntu22.04-py3.11", "cann": "8.2.RC1",
      "torch_npu": "9.9.9"}, "torch-npu 9.9.9 is not in torch-npu.json"),
    ({"soc": "A5", "image": "x/cann:8.2.rc1-a3-ubuntu22.04-py3.11", "cann": "8.2.RC1", "torch_npu": "2.14.0"},
     "soc must be one of ['A2', 'A3']"),
])
def test_an_invalid_leg_is_refused_with_its_reason(leg: dict, message: str) -> None:
    with pytest.raises(nightly_matrix.MatrixError, match=re.escape(message)):
        nightly_matrix.include([leg], nightly_matrix.RUNNERS, nightly_matrix.load_table())


def test_a_dispatched_leg_list_replaces_the_file() -> None:
    legs = [{"soc": "A3", "image": "quay.io/ascend/cann:8.2.rc1-a3-ubuntu22.04-py3.11", "cann": "8.2.rc1",
             "torch_npu": "2.6.0"}]
    outputs = legs_outputs("--legs", json.dumps(legs), "--a3-runner", '["self-hosted", "a3-big"]')
    (entry,) = json.loads(outputs["include"])
    assert entry["runner"] == ["self-hosted", "a3-big"] and entry["cann"] == "8.2.RC1"
    assert entry["leg"] == "A3-cann-8.2.RC1-torch_npu-2.6.0"


def test_the_evaluator_follows_githubs_rules() -> None:
    ctx = {"inputs": {"x": ""}, "matrix": {"soc": "A2"}}
    assert gh.evaluate("inputs.x || 'd'", ctx) == "d" and gh.evaluate("matrix.soc == 'a2'", ctx) is True
    assert gh.evaluate("matrix.soc == 'A2' && 'yes' || 'no'", ctx) == "yes"
    assert gh.render("a-${{ matrix.soc }}-${{ inputs.missing }}", ctx) == "a-A2-"
    assert gh.condition("${{ !cancelled() }}", {"__status__": "failure"}) is True
    assert gh.condition("matrix.soc == 'A2'", {**ctx, "__status__": "failure"}) is False
    assert gh.expand_matrix({"soc": ["A2", "A3"], "include": [{"soc": "A2", "x": 1}, {"soc": "A5"}]}) == [
        {"soc": "A2", "x": 1}, {"soc": "A3"}, {"soc": "A5"}]
    with pytest.raises(ValueError, match="does not know hashFiles"):
        gh.evaluate("hashFiles('x')", ctx)
