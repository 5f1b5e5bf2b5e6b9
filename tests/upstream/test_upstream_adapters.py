"""The pure parts of the upstream adapters (IMPL-2, IMPL-3, IMPL-4): wheel extraction, cache folder, CANN version
lookup order, the native stand-ins, the import finder and the threshold hook. Nothing here fetches the wheel or
imports torch_npu; the suite against the real sources runs in ``tox -e upstream``."""

from __future__ import annotations

import importlib.util
import marshal
import subprocess
import sys
import textwrap
import types
import zipfile
from pathlib import Path

import pytest
import torch

from torchair_cpu import wheel
from torchair_cpu.standins import _abi_compat_ge_apis, _npu_graph_executor, _npu_utils, _torchair
from torchair_cpu.standins._needs import NeedsCANNError
from torchair_npu import hooks, versions

ROOT = Path(__file__).resolve().parents[2]


def _fake_wheel(path: Path, members: dict) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return path


_MEMBERS = {
    "torch_npu/version.py": "__version__ = '9.9.9'\ngit_version = 'abc'\n",
    "torch_npu/dynamo/torchair/__init__.py": "VALUE = 1\n",
    "torch_npu/dynamo/torchair/core/utils.py": "X = 2\n",
    "torch_npu/dynamo/torchair/core/_torchair.so": "ELF",
    "torch_npu/__init__.py": "raise ImportError('the real torch_npu')\n",
    "torch_npu/dynamo/torchair/../../evil.py": "escape\n",
}


def test_only_torchairs_python_and_the_version_file_are_taken():
    chosen = wheel.source_members(_MEMBERS)
    assert sorted(chosen) == ["torch_npu/dynamo/torchair/__init__.py", "torch_npu/dynamo/torchair/core/utils.py",
                              "torch_npu/version.py"]


def test_extract_is_complete_and_reads_the_wheels_version(tmp_path):
    source = _fake_wheel(tmp_path / "torch_npu-9.9.9-cp311-none-any.whl", _MEMBERS)
    target = wheel.extract(source, tmp_path / "cache" / "torch_npu-9.9.9")
    assert (target / "torchair" / "__init__.py").read_text() == "VALUE = 1\n"
    assert (target / "torchair" / "core" / "utils.py").is_file()
    assert not (target / "torchair" / "core" / "_torchair.so").exists()
    assert not list(target.rglob("evil.py")) and not (tmp_path / "cache" / "evil.py").exists()
    assert wheel.wheel_version(target) == "9.9.9"
    # Bytecode is there from the start (as pip writes it), naming the final path, not the staging folder.
    cached = importlib.util.cache_from_source(str(target / "torchair" / "core" / "utils.py"))
    code = marshal.loads(Path(cached).read_bytes()[16:])
    assert code.co_filename == str(target / "torchair" / "core" / "utils.py")
    # No staging directory is left beside it, and a second call keeps the complete copy.
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["torch_npu-9.9.9"]
    assert wheel.extract(source, target) == target


def test_a_wheel_without_torchair_is_refused_and_leaves_nothing(tmp_path):
    source = _fake_wheel(tmp_path / "other.whl", {"torch_npu/version.py": "__version__ = '1'\n"})
    with pytest.raises(wheel.WheelError, match="no torch_npu/dynamo/torchair"):
        wheel.extract(source, tmp_path / "cache" / "torch_npu-1")
    assert list((tmp_path / "cache").iterdir()) == []


def test_cache_folder_and_version_come_from_the_environment(tmp_path):
    assert wheel.cache_root({wheel.CACHE_ENV: str(tmp_path / "c")}) == (tmp_path / "c").resolve()
    assert wheel.cache_root({"XDG_CACHE_HOME": str(tmp_path)}) == (tmp_path / "torchair-conformance").resolve()
    assert wheel.requested_version({}) == "2.14.0"
    assert wheel.requested_version({wheel.VERSION_ENV: "2.9.0"}) == "2.9.0"


def _torch(cann=None):
    return types.SimpleNamespace(__version__="2.14.1", version=types.SimpleNamespace(cann=cann))


def _torch_npu(getter):
    return types.SimpleNamespace(__version__="2.14.0", npu=types.SimpleNamespace(utils=types.SimpleNamespace(
        get_cann_version=getter)))


def _toolkit(tmp_path: Path, sub: str = "") -> dict:
    folder = tmp_path / "ascend" / sub
    folder.mkdir(parents=True)
    (folder / versions.TOOLKIT_INFO).write_text("package_name=Ascend-cann-toolkit\nversion=8.5.RC1\narch=x86_64\n")
    return {"ASCEND_HOME_PATH": str(tmp_path / "ascend")}


def test_cann_version_prefers_torch_version_cann(tmp_path):
    env = _toolkit(tmp_path)
    assert versions.cann_version(_torch("8.3.0"), _torch_npu(lambda: "8.2.0"), env) == "8.3.0"


def test_cann_version_then_asks_torch_npu_utils(tmp_path):
    env = _toolkit(tmp_path)
    assert versions.cann_version(_torch(), _torch_npu(lambda: "8.2.0"), env) == "8.2.0"


def test_cann_version_then_reads_the_toolkit_info_file(tmp_path):
    def broken():
        raise RuntimeError("no CANN")

    assert versions.cann_version(_torch(), _torch_npu(broken), _toolkit(tmp_path)) == "8.5.RC1"
    assert versions.cann_version(_torch(), types.SimpleNamespace(), _toolkit(tmp_path / "x", "x86_64-linux")) == \
        "8.5.RC1"


def test_cann_version_is_none_when_nothing_says(tmp_path):
    assert versions.cann_version(_torch(), _torch_npu(lambda: None), {}) is None
    assert versions.declared_versions(_torch(), _torch_npu(lambda: None), {}) == {
        "torch": "2.14.1", "torch_npu": "2.14.0", "cann": None}


@pytest.mark.parametrize("call", [
    lambda: _torchair.check_cann_compat("Op", (), ()),
    lambda: _torchair.get_registered_ir_def("Op"),
    lambda: _torchair.TorchNpuGraphBase("g").auto_tune(([], None)),  # load/run: test_standin_graph.py
    lambda: _npu_graph_executor.GetNpuStorageSizes(None),
    lambda: _npu_utils.NpuFormatCastViaCpu(None, 2),
    lambda: _abi_compat_ge_apis.AnyGeApi,
])
def test_stand_ins_reached_for_real_work_say_they_need_cann(call):
    with pytest.raises(NeedsCANNError, match="needs CANN/GE"):
        call()


def test_the_export_stand_in_writes_upstreams_bytes_unchanged(tmp_path):
    payload = b"\x3a\x02\x0a\x00 serialized ModelDef"
    _torchair.export(payload, {"export_path_dir": str(tmp_path), "export_name": "net.air"})
    assert (tmp_path / "net.air").read_bytes() == payload


def test_finder_serves_torchair_with_stand_ins_and_refuses_torch_npu(tmp_path):
    package = tmp_path / "torchair"
    (package / "core").mkdir(parents=True)
    (package / "__init__.py").write_text("from torchair.core import _torchair\nGRAPH = _torchair.TorchNpuGraphBase\n")
    (package / "core" / "__init__.py").write_text("")
    script = textwrap.dedent(f"""
        import sys
        from torchair_cpu import finder
        finder.install({str(package)!r})
        import torchair
        assert torchair.__file__ == {str(package / '__init__.py')!r}, torchair.__file__
        assert torchair.GRAPH.__module__ == "torchair_cpu.standins._graph"
        import importlib.util
        installed = {str(tmp_path / 'site')!r} in sys.path
        # as on a host without torch-npu (transformers asks find_spec before it imports); an installed one is refused
        try:
            found = importlib.util.find_spec("torch_npu")
        except ModuleNotFoundError as exc:
            found = str(exc)
        assert found is None if not installed else "torchair_cpu" in found, found
        try:
            import torch_npu
        except ModuleNotFoundError as exc:
            assert ("torchair_cpu" in str(exc)) == installed, exc
        else:
            raise SystemExit("torch_npu was importable")
        assert "torch_npu" not in sys.modules and {str(tmp_path)!r} not in sys.path
        print("ok")
    """)
    (tmp_path / "site" / "torch_npu").mkdir(parents=True)
    (tmp_path / "site" / "torch_npu" / "__init__.py").write_text("raise SystemExit('the real torch_npu ran')\n")
    for path in (f"{ROOT / 'impl'}", f"{ROOT / 'impl'}:{tmp_path / 'site'}"):
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=str(tmp_path),
                              env={"PYTHONPATH": path, "PATH": "/usr/bin:/bin"}, timeout=120)
        assert proc.returncode == 0 and proc.stdout.strip() == "ok", path + proc.stdout + proc.stderr


def test_threshold_hook_compares_upstreams_own_sum_against_the_override(monkeypatch):
    calls = []

    def original(inputs, weight_name, export_graph):
        calls.append("original")
        return False, 0

    export_utils = types.ModuleType("fake_torchair._utils.export_utils")
    export_utils._is_weight_externalized = original
    monkeypatch.setitem(sys.modules, "fake_torchair", types.ModuleType("fake_torchair"))
    monkeypatch.setitem(sys.modules, "fake_torchair._utils", types.ModuleType("fake_torchair._utils"))
    monkeypatch.setitem(sys.modules, "fake_torchair._utils.export_utils", export_utils)
    weight, data = torch.zeros(4), torch.zeros(100)
    graph = types.SimpleNamespace(ByteSize=lambda: 10)
    override = hooks.threshold_hook(sys.modules["fake_torchair"])
    with override(10 + 16 - 1):
        assert export_utils._is_weight_externalized([data, weight], {id(weight): "w"}, graph) == (True, 1)
    with override(10 + 16):
        assert export_utils._is_weight_externalized([data, weight], {id(weight): "w"}, graph) == (False, 1)
    assert export_utils._is_weight_externalized is original and calls == []
