"""The nightly in a real Ascend lab (issue 33, items 1-3): legs name their image freely and are checked against
Ascend's CANN ↔ torch-npu pairs; the runner's pip and proxy settings and a persistent pip cache reach the leg's
container; publish installs from a hash-pinned lock and has a deadline, after which legs that sent nothing are
missing. The README's lab leg file is the one checked here."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.report import workflow_expr as gh
from tests.report.test_workflows_matrix import NIGHTLY, PUBLISH, ROOT, load, rendered_legs
from torchair_conformance import nightly_matrix
from torchair_conformance.report import cann

SCRIPTS = ROOT / ".github" / "scripts"
LOCK = ROOT / "constraints" / "report-lock.txt"


def readme_lab_legs() -> list[dict]:
    """The leg file of the README's "A lab behind a proxy and a PyPI mirror, end to end"."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### A lab behind a proxy and a PyPI mirror"):]
    block = re.search(r"```json\n(.*?)```", section, re.S).group(1)
    return json.loads(block)["legs"]


def include(legs: list[dict]) -> list[dict]:
    return nightly_matrix.include(legs, nightly_matrix.RUNNERS, nightly_matrix.load_table())


def test_a_labs_images_run_a_mirror_with_a_port_a_digest_and_a_teams_own_image() -> None:
    entries = include(readme_lab_legs())
    images = [e["image"] for e in entries]
    assert any(":5000/" in i for i in images) and any("@sha256:" in i for i in images)
    assert any("npu-team/torchair-ci" in i for i in images)
    ids = [e["leg"] for e in entries]
    assert ids == ["A2-cann-8.2.RC1-torch_npu-2.6.0-ubuntu22.04-py3.11",
                   "A2-cann-8.2.RC1-torch_npu-2.6.0-openeuler22.03-py3.11",
                   "A3-cann-8.2.RC1-torch_npu-2.6.0", "A3-cann-8.3.RC1-torch_npu-2.8.0-team-image"]
    assert len({e["pip_cache"] for e in entries}) == len(entries), "a pip cache per image and pins"
    expected = nightly_matrix.expected(entries)
    assert expected[0] == {"soc": "A2", "cann": "8.2.RC1", "torch_npu": "2.6.0", "variant": "ubuntu22.04-py3.11"}


@pytest.mark.parametrize(("leg", "message"), [
    ({"soc": "A2", "image": "registry.internal.example:5000/mirror/ascend/cann:8.2.rc1-910b-ubuntu22.04-py3.11",
      "cann": "8.2.RC1", "torch_npu": "2.14.0"},
     "CANN 8.2.RC1 and torch-npu 2.14.0 do not go together in torch-npu.json (Ascend's release notes): CANN 8.2.RC1 "
     "goes with torch-npu 2.1.0.post13, 2.5.1.post1, 2.6.0; torch-npu 2.14.0 goes with CANN 9.1.0"),
    ({"soc": "A2", "image": "harbor.lab.example/team/ci:7", "cann": "8.5.0", "torch_npu": "2.6.0"},
     "CANN 8.5.0 goes with torch-npu 2.6.0.post5, 2.7.1.post2, 2.8.0.post2, 2.9.0"),
    ({"soc": "A2", "image": "quay.io/ascend/cann", "cann": "8.2.RC1", "torch_npu": "2.6.0"},
     "names neither a tag nor a digest"),
    ({"soc": "A2", "image": "quay.io/ascend/cann:8.2.rc1-310p-ubuntu22.04-py3.11", "cann": "8.2.RC1",
      "torch_npu": "2.6.0"}, "the image's tag names 310P (310p), not A2"),
    ({"soc": "A2", "image": "Quay.io/Ascend/CANN:8.2.rc1", "cann": "8.2.RC1", "torch_npu": "2.6.0"},
     "is not a container image reference"),
    ({"soc": "A2", "image": "quay.io/ascend/cann:8.2.rc1-910b-ubuntu22.04-py3.11", "cann": "8.2.RC1",
      "torch-npu": "2.6.0", "torch_npu": "2.6.0"}, "unknown field(s) ['torch-npu']"),
])
def test_a_leg_that_pairs_wrongly_or_names_no_image_is_refused(leg: dict, message: str) -> None:
    with pytest.raises(nightly_matrix.MatrixError, match=re.escape(message)):
        include([leg])


def test_a_repeated_leg_needs_its_variant() -> None:
    digest = "registry.internal.example:5000/ascend/cann@sha256:" + "a" * 64
    same = {"soc": "A2", "cann": "8.2.RC1", "torch_npu": "2.6.0"}
    with pytest.raises(nightly_matrix.MatrixError, match="give each a distinct 'variant'"):
        include([{**same, "image": digest}, {**same, "image": digest.replace("a" * 64, "b" * 64)}])
    entries = include([{**same, "image": digest, "variant": "ubuntu"}, {**same, "image": digest, "variant": "euler"}])
    assert [e["leg"] for e in entries] == ["A2-cann-8.2.RC1-torch_npu-2.6.0-ubuntu",
                                           "A2-cann-8.2.RC1-torch_npu-2.6.0-euler"]


def test_every_pair_cites_its_source_and_the_pins_follow_the_table() -> None:
    table = nightly_matrix.load_table()
    assert table.pairs and set(table.sources) == {p.source for p in table.pairs}
    for source, text in table.sources.items():
        assert re.search(r"https://|wheel's own METADATA", text), source
    for pair in table.pairs:
        assert all(cann.sort_key(c)[0] == 1 for c in pair.cann), pair
        assert all(t in table.torch for t in pair.torch_npu), f"no torch pin for {pair.torch_npu}"
    assert [p.torch_npu for p in table.pairs if p.provisional] == [("2.14.0",)], "provisional rows are named"
    assert not nightly_matrix.check_pair("x", "8.2.RC1.B010", "2.6.0", table).provisional, "a B-build pairs as 8.2.RC1"


def fake(tmp_path: Path, name: str, body: str) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / name).write_text(f"#!{sys.executable}\nimport json, os, sys\n{body}", encoding="utf-8")
    (bin_dir / name).chmod(0o755)
    return bin_dir


def leg_run(tmp_path: Path, **env: str) -> tuple[list[str], dict[str, str]]:
    """npu-leg.sh for the first default leg on a fake runner: `docker run`'s arguments, and the values of the
    variables it passes by name (what the container sees)."""
    calls = tmp_path / "docker.calls"
    bin_dir = fake(tmp_path, "docker", f"""
args = sys.argv[1:]
names = [a for i, a in enumerate(args) if i and args[i - 1] == '-e' and '=' not in a]
open({str(calls)!r}, 'a').write(json.dumps([args, {{n: os.environ.get(n) for n in names}}]) + '\\n')
""")
    job = rendered_legs()[0]
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    base = {k: str(v) for k, v in job["env"].items() if v is not None}
    base = {**base, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GITHUB_WORKSPACE": str(workspace),
            "ASCEND_DEVICES": "0", "HOME": str(tmp_path / "home"), "RUNNER_TOOL_CACHE": str(tmp_path / "tools"),
            "TOX_PIN": "tox==4.67.15", **env}
    done = subprocess.run(["bash", str(SCRIPTS / "npu-leg.sh")], env=base, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    runs = [json.loads(line) for line in calls.read_text().splitlines() if json.loads(line)[0][0] == "run"]
    calls.unlink()
    return runs[-1]


def test_the_runners_pip_and_proxy_settings_reach_the_legs_container(tmp_path: Path) -> None:
    conf, ca = tmp_path / "pip.conf", tmp_path / "lab-ca.pem"
    conf.write_text("[global]\nindex-url = https://pypi.internal.example/simple\n", encoding="utf-8")
    ca.write_text("-----BEGIN CERTIFICATE-----\n", encoding="utf-8")
    settings = {"PIP_INDEX_URL": "https://pypi.internal.example/simple", "PIP_EXTRA_INDEX_URL": "https://x/whl",
                "PIP_TRUSTED_HOST": "pypi.internal.example", "PIP_DEFAULT_TIMEOUT": "120",
                "HTTPS_PROXY": "http://proxy.lab.example:3128", "http_proxy": "http://proxy.lab.example:3128",
                "NO_PROXY": "localhost,registry.internal.example", "PIP_CONFIG_FILE": str(conf),
                "REQUESTS_CA_BUNDLE": str(ca), "TORCH_CPU_INDEX_URL": "https://mirror/cpu"}
    args, seen = leg_run(tmp_path, **settings)
    pairs = list(zip(args, args[1:]))
    for name in ("PIP_INDEX_URL", "PIP_TRUSTED_HOST", "PIP_DEFAULT_TIMEOUT", "HTTPS_PROXY", "http_proxy", "NO_PROXY",
                 "PIP_CONFIG_FILE", "REQUESTS_CA_BUNDLE"):
        assert seen.get(name) == settings[name], name
    assert seen["PIP_EXTRA_INDEX_URL"] == "https://x/whl https://mirror/cpu", "the runner's extra index kept"
    for derived in ("https_proxy=http://proxy.lab.example:3128", "HTTP_PROXY=http://proxy.lab.example:3128",
                    "no_proxy=localhost,registry.internal.example"):
        assert ("-e", derived) in pairs, f"both spellings: {derived}"
    assert ("-v", f"{conf}:{conf}:ro") in pairs and ("-v", f"{ca}:{ca}:ro") in pairs, "the files they name"
    # without PIP_CONFIG_FILE, the runner user's pip.conf becomes the container's
    home_conf = tmp_path / "home" / ".config" / "pip" / "pip.conf"
    home_conf.parent.mkdir(parents=True)
    home_conf.write_text("[global]\ntimeout = 60\n", encoding="utf-8")
    args, _ = leg_run(tmp_path)
    pairs = list(zip(args, args[1:]))
    assert ("-v", f"{home_conf}:/run/torchair-leg/pip.conf:ro") in pairs
    assert ("-e", "PIP_CONFIG_FILE=/run/torchair-leg/pip.conf") in pairs


def test_a_pip_cache_per_image_and_pins_persists_from_night_to_night(tmp_path: Path) -> None:
    key = rendered_legs()[0]["env"]["PIP_CACHE_KEY"]
    assert key == nightly_matrix.pip_cache_key(rendered_legs()[0]["env"]["IMAGE"], "2.14.0", "2.14.0")
    cache = tmp_path / "tools" / "torchair-nightly-pip" / key
    for _ in range(2):  # two nights: the same host folder
        args, _ = leg_run(tmp_path)
        pairs = list(zip(args, args[1:]))
        assert ("-v", f"{cache}:/run/torchair-leg/pip-cache") in pairs
        assert ("-e", "PIP_CACHE_DIR=/run/torchair-leg/pip-cache") in pairs
        (cache / "http-v2").mkdir(exist_ok=True)
    assert (cache / "http-v2").is_dir(), "what a night cached is there the next night"
    old = cache.parent / "pip-0000000000000000"
    old.mkdir()
    os.utime(old, (0, 0))
    leg_run(tmp_path)
    assert not old.exists() and cache.exists(), "a cache unused for 30 days is removed, tonight's kept"
    other = nightly_matrix.pip_cache_key("quay.io/ascend/cann:9.1.0-910b-openeuler24.03-py3.11", "2.14.0", "2.14.0")
    assert other != key, "another image, another cache"


def test_publish_installs_from_a_hash_pinned_lock() -> None:
    steps = load(PUBLISH)["jobs"]["publish"]["steps"]
    installs = [s["run"] for s in steps if "pip install" in s.get("run", "")]
    assert installs == ["python -m pip install --require-hashes --no-deps -r constraints/report-lock.txt"]
    text = LOCK.read_text(encoding="utf-8")
    pins = re.findall(r"^([a-z0-9_.-]+)==([\w.]+) \\$", text, re.M)
    assert {"matplotlib", "jinja2", "packaging"} <= {name for name, _ in pins}
    entries = re.split(r"\n(?=[a-z])", text[text.index("\n\n") + 2:].strip())
    assert len(entries) == len(pins) and all("--hash=sha256:" in e for e in entries), "every pin is hashed"
    assert not {"scipy", "torch"} & {name for name, _ in pins}


def test_publish_has_a_deadline_and_needs_no_leg() -> None:
    nightly, publish = load(NIGHTLY), load(PUBLISH)
    triggers = publish.get("on") or publish.get(True)
    legs_start = int(nightly.get("on", nightly.get(True))["schedule"][0]["cron"].split()[1])
    deadline = int(triggers["schedule"][0]["cron"].split()[1])
    hours = (deadline - legs_start) % 24
    assert hours == 7 and hours * 60 > nightly["jobs"]["nightly"]["timeout-minutes"], "after every leg's timeout"
    assert triggers["workflow_run"]["workflows"] == [nightly["name"]], "or as soon as the night completes"
    assert "needs" not in publish["jobs"]["publish"], "no wait on an offline runner"


def night_outputs(tmp_path: Path, jobs: list[tuple[str, str, str]], **env: str) -> dict[str, str]:
    rows = "\\n".join("\\t".join(job) for job in jobs)
    bin_dir = fake(tmp_path, "gh", f"""
url = [a for a in sys.argv[1:] if a.startswith('repos/')][0]
if '/workflows/' in url: print('777')
elif url.endswith('/jobs'): print({rows!r}.replace('\\\\t', '\\t').replace('\\\\n', '\\n'))
else: print('abc123')
""")
    done = subprocess.run(["bash", str(SCRIPTS / "night-to-publish.sh")], capture_output=True, text=True, timeout=30,
                          env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
                               "GITHUB_REPOSITORY": "ascend/tc", "NIGHTLY_WORKFLOW": "nightly-ascend.yml", **env})
    assert done.returncode == 0, done.stderr
    return dict(line.split("=", 1) for line in done.stdout.splitlines())


def verdict_step(**env: str) -> tuple[int, str]:
    (step,) = [s for s in load(PUBLISH)["jobs"]["publish"]["steps"] if s.get("name", "").startswith("The night's")]
    assert gh.condition(step.get("if"), {"__status__": "failure", "steps": {"mode": {"outputs": {"mode": "publish"}}}})
    done = subprocess.run(["bash", "-e", "-c", step["run"]], env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=30)
    return done.returncode, done.stdout


def test_at_the_deadline_the_legs_that_sent_nothing_are_missing_and_the_night_is_published(tmp_path: Path) -> None:
    out = night_outputs(tmp_path, [("completed", "success", "A2 · CANN 9.1.0 · torch-npu 2.14.0"),
                                   ("queued", "", "A3 · CANN 9.1.0 · torch-npu 2.14.0"),
                                   ("completed", "failure", "A2 · CANN 8.5.0 · torch-npu 2.9.0"),
                                   ("completed", "success", "the night's legs")])
    assert out == {"run_id": "777", "head_sha": "abc123", "failed_legs": "A2 · CANN 8.5.0 · torch-npu 2.9.0",
                   "pending_legs": "A3 · CANN 9.1.0 · torch-npu 2.14.0"}
    assert night_outputs(tmp_path, [], EVENT_RUN="901")["run_id"] == "901", "the run that completed"
    status, text = verdict_step(FAILED_LEGS="", PENDING_LEGS="A3 · CANN 9.1.0 · torch-npu 2.14.0", REPORT_STATUS="1")
    assert status == 1 and "published as missing: A3" in text and "the night is red" in text
    assert verdict_step(FAILED_LEGS="", PENDING_LEGS="", REPORT_STATUS="0") == (0, "")
    assert verdict_step(FAILED_LEGS="A2 · x", PENDING_LEGS="", REPORT_STATUS="0")[0] == 1
