"""The environment key (BE-3): CANN from the toolkit's install info, never by importing torch_npu off-NPU."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from torchair_conformance.bench import environment


@pytest.mark.parametrize("relative", ["x86_64-linux/ascend_toolkit_install.info", "ascend_toolkit_install.info"])
def test_cann_version_from_install_info(tmp_path: Path, relative: str) -> None:
    info = tmp_path / relative
    info.parent.mkdir(parents=True, exist_ok=True)
    info.write_text("package_name=Ascend-cann-toolkit\nversion=8.1.RC1\narch=x86_64\n", encoding="utf-8")
    found = environment.cann_from_install_info({"ASCEND_HOME_PATH": str(tmp_path)}, arch="x86_64")
    assert found == "8.1.RC1", f"expected 8.1.RC1 from {info}, found {found!r}"


def test_no_toolkit_no_cann(tmp_path: Path) -> None:
    assert environment.cann_from_install_info({}) is None
    assert environment.cann_from_install_info({"ASCEND_HOME_PATH": str(tmp_path)}) is None


def test_collect_off_npu_has_null_cann_and_never_imports_torch_npu(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ascend_toolkit_install.info").write_text("version=8.0.RC3\n", encoding="utf-8")
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path))
    import torchair_ref

    env = environment.collect("torchair_ref", torchair_ref, "cpu")
    assert env["cann"] is None and env["torch_npu"] is None, env
    assert env["impl_version"] == torchair_ref.__version__ and env["device"] == "cpu"
    assert set(env) >= {"impl", "torch", "soc", "python", "host", "threads"}
    assert "torch_npu" not in sys.modules


def test_project_commit_is_a_git_hash() -> None:
    commit = environment.project_commit()
    if commit is None:
        pytest.skip("not a git checkout")
    assert len(commit.split("+")[0]) == 40, commit


def test_a_published_result_does_not_make_the_tree_dirty(tmp_path) -> None:
    """BE-3: `bench --publish` appends to reports/history; the next benchmark still measures a clean commit."""
    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    (tmp_path / "reports" / "history").mkdir(parents=True)
    (tmp_path / "reports" / "history" / "cpu.jsonl").write_text("{}\n", encoding="utf-8")
    (tmp_path / "code.py").write_text("x = 1\n", encoding="utf-8")
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "start")
    (tmp_path / "reports" / "history" / "cpu.jsonl").write_text("{}\n{}\n", encoding="utf-8")
    assert not environment.project_commit(tmp_path).endswith("+dirty")
    (tmp_path / "code.py").write_text("x = 2\n", encoding="utf-8")
    assert environment.project_commit(tmp_path).endswith("+dirty")


def test_ascend_version_files_and_npu_smi_summary(tmp_path) -> None:
    from torchair_conformance.bench import environment

    info = tmp_path / "version.info"
    info.write_text("Version=24.1.rc3\nascendhal_version=7.35.23\n", encoding="utf-8")
    assert environment.version_file(str(info)) == "24.1.rc3"
    assert environment.version_file(str(tmp_path / "absent")) is None
    smi = ("+----------------------+\n| npu-smi 24.1.rc3                 Version: 24.1.rc3 |\n"
           "| NPU   Name      | Health | Power(W) |\n| 0     910B2     | OK     | 93.1     |\n"
           "+======================+\n")
    summary = environment.npu_smi_summary(smi)
    assert summary.startswith("npu-smi 24.1.rc3") and "0 910B2 | OK | 93.1" in summary
    assert environment.npu_smi_summary("") is None
