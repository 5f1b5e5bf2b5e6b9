"""`tox -e npu` fails first and clearly without an NPU (issue 21): the standard-library preflight, and its place as
the env's first step, before anything is installed."""
from __future__ import annotations

import configparser
import os
import subprocess
import sys
from pathlib import Path

from torchair_conformance import npu_preflight

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "torchair_conformance" / "npu_preflight.py"


def preflight(tmp_path: Path, *args: str, **environ: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}
    # -I: no site-packages, no PYTHONPATH: the check runs before torch (or anything) is installed
    return subprocess.run([sys.executable, "-I", str(SCRIPT), "--dev", str(tmp_path / "dev"), *args],
                          env={**env, **environ}, capture_output=True, text=True, timeout=60)


def test_a_host_without_an_npu_or_cann_is_told_what_is_missing(tmp_path: Path) -> None:
    (tmp_path / "dev").mkdir()
    done = preflight(tmp_path, "--torch-npu", "2.14.0", "--torch", "2.14.0")
    assert done.returncode == 2
    assert "no NPU device: no " in done.stderr and "davinci<N>" in done.stderr
    assert "ASCEND_HOME_PATH is not set" in done.stderr and "set_env.sh" in done.stderr
    assert "stopped before installing anything" in done.stderr and "Traceback" not in done.stderr


def test_devices_cann_and_the_pin_in_place_pass(tmp_path: Path) -> None:
    (tmp_path / "dev").mkdir()
    for name in ("davinci0", "davinci3", "davinci_manager"):
        (tmp_path / "dev" / name).touch()
    (tmp_path / "cann").mkdir()
    done = preflight(tmp_path, "--torch-npu", "2.14.0", "--torch", "2.14.0", ASCEND_HOME_PATH=str(tmp_path / "cann"))
    assert done.returncode == 0, done.stderr
    (tmp_path / "dev" / "davinci_manager").unlink()
    assert npu_preflight.device_problems(str(tmp_path / "dev")) == [
        f"no {tmp_path}/dev/davinci_manager: the container needs --device {tmp_path}/dev/davinci_manager (and "
        f"{tmp_path}/dev/devmm_svm, {tmp_path}/dev/hisi_hdc) beside its NPUs"]


def test_a_torch_pin_that_is_not_the_torch_npu_releases_is_named(tmp_path: Path) -> None:
    assert npu_preflight.pin_problems("2.6.0", "2.14.0") == [
        f"torch 2.14.0 is not the pin of torch-npu 2.6.0 (2.6.0, from {npu_preflight.TABLE}): set TORCH_VERSION=2.6.0"]
    assert "is not in" in npu_preflight.pin_problems("9.9.9", "9.9.9")[0]
    assert npu_preflight.cann_problems({"ASCEND_HOME_PATH": str(tmp_path / "absent")})[0].startswith(
        f"ASCEND_HOME_PATH={tmp_path / 'absent'} is not a folder")


def test_the_preflight_is_the_npu_envs_first_step_before_any_install() -> None:
    # tox installs `deps`, `extras` and the package before the first command (commands_pre included): the env must
    # declare none of them for the preflight to run first (checked by hand with `tox -e npu` on a host without an NPU).
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini", encoding="utf-8")
    env = tox["testenv:npu"]
    assert env.get("skip_install") == "true" and not env.get("deps", "").strip()
    assert "extras" not in env and "commands_pre" not in env
    commands = [line for line in env["commands"].splitlines() if line.strip()]
    assert "torchair_conformance/npu_preflight.py" in commands[0]
    assert "pip install" in commands[1] and "{[testenv:npu]torch_version}" in commands[1]
