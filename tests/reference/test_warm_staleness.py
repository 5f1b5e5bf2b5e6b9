"""A warm start never gives a wrong answer: stale code, foreign files, inputs, threads, leaks (CC-12, CC-14, CC-15).

Each case runs in fresh processes (`tests/programs/stale_run.py`) on a model written to a file, so that an edit of
that file is what a user's edit would be. One cold compile, made by 8 threads at once, is shared by the cases that
start warm from it (each restores the same cache first).
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_program

pytestmark = pytest.mark.slow

MODEL = '''\
import torch

import torchair_ref


def scale(x):
    return x * 2.0


class Sub(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return self.fc(x)


class Model(torch.nn.Module):
    def __init__(self, options):
        super().__init__()
        self.sub = Sub()
        self.cached = torchair_ref.inference.cache_compile(self.run, **options)

    def _helper(self, x):
        return torch.relu(x)

    def run(self, x):
        return scale(self._helper(self.sub(x)))


def build(options):
    return Model(options)
'''

#: a model without parameters, so that any dtype and device is a valid input
PLAIN = '''\
import torch

import torchair_ref


class Plain(torch.nn.Module):
    def __init__(self, options):
        super().__init__()
        self.cached = torchair_ref.inference.cache_compile(self.run, **options)

    def run(self, x):
        return torch.relu(x) * 2 + x.sum(-1, keepdim=True)


def build(options):
    return Plain(options)
'''

EDITS = {
    "helper": ("return torch.relu(x)", "return torch.sigmoid(x)", "Model._helper"),
    "submodule_forward": ("return self.fc(x)", "return self.fc(x) - 1.0", "Sub.forward"),
    "module_function": ("return x * 2.0", "return x * 3.0", "scale"),
}


def run(job: dict[str, Any], cwd: Path, faulthandler: bool = False) -> dict[str, Any]:
    return run_program("stale_run", job, cwd, env={"OMP_NUM_THREADS": "1"},
                       python_flags=("-X", "faulthandler") if faulthandler else ())


def cache_files(root: Path) -> list[Path]:
    return sorted(root.rglob("compiled_module"))


@pytest.fixture(scope="module")
def cold(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """CC-14 under threads: 8 threads make the first call at once; one trace, one file, the same answers."""
    work = tmp_path_factory.mktemp("stale")
    (work / "model.py").write_text(MODEL)
    report = run({"source": str(work / "model.py"), "threads": 8, "calls": []}, work)
    (path,) = cache_files(work / ".torchair_cache")
    shutil.copytree(work / ".torchair_cache", work / "pristine")
    return {"work": work, "report": report, "file": path}


def restore(cold: dict[str, Any], source: str = MODEL) -> Path:
    work = cold["work"]
    shutil.rmtree(work / ".torchair_cache", ignore_errors=True)
    shutil.copytree(work / "pristine", work / ".torchair_cache")
    (work / "model.py").write_text(source)
    return work


def test_eight_threads_first_call_trace_once_and_save(cold: dict[str, Any]) -> None:
    """CC-11, CC-12: the first call is made once under a lock; the other threads wait and use its result."""
    report = cold["report"]
    assert report["unique_graphs"] == 1, report
    assert report["threads_same"] is True, report
    assert not [w for w in report["warnings"] if "recompiled" in w], report["warnings"]
    assert cold["file"].is_file()


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_edited_traced_code_is_stale(cold: dict[str, Any], edit: str) -> None:
    """CC-14/CC-17: editing any code Dynamo traced (helper, submodule forward, module function) rebuilds."""
    old, new, qualname = EDITS[edit]
    assert old in MODEL
    work = restore(cold, MODEL.replace(old, new))
    report = run({"source": str(work / "model.py"), "calls": [{}]}, work)
    assert report["calls"] == [True], report
    assert report["unique_graphs"] == 1, report
    stale = [w for w in report["warnings"] if "Discarding stale cache" in w]
    assert len(stale) == 1 and "traced code changed" in stale[0] and qualname in stale[0], report["warnings"]
    again = run({"source": str(work / "model.py"), "calls": [{}]}, work)
    assert again["unique_graphs"] == 0 and again["calls"] == [True] and not again["warnings"], again


def test_unedited_source_loads_warm(cold: dict[str, Any]) -> None:
    """CC-14: the unedited file loads without tracing and agrees with the eager method."""
    work = restore(cold)
    report = run({"source": str(work / "model.py"), "calls": [{}, {"shape": [3, 8]}]}, work)
    assert report["unique_graphs"] == 0 and report["calls"] == [True, True], report
    assert not report["warnings"], report["warnings"]


def test_model_to_bfloat16_before_the_first_warm_call_rebuilds(cold: dict[str, Any]) -> None:
    """CC-14: parameters of another dtype than the cached graph's: stale, rebuilt, right answer."""
    work = restore(cold)
    report = run({"source": str(work / "model.py"), "to_dtype": "bfloat16", "calls": [{"dtype": "bfloat16"}]}, work)
    assert report["calls"] == [True] and not report["errors"], report
    assert report["unique_graphs"] == 1, report
    assert any("does not fit the graph" in w and "bfloat16" in w for w in report["warnings"]), report["warnings"]


def test_train_mode_is_checked_at_load(cold: dict[str, Any]) -> None:
    """CC-14: a cache written in eval mode is stale for a module in train mode (README: what is not re-checked)."""
    work = restore(cold)
    report = run({"source": str(work / "model.py"), "train": True, "calls": [{}]}, work)
    assert report["calls"] == [True] and report["unique_graphs"] == 1, report
    assert any("train mode" in w for w in report["warnings"]), report["warnings"]


def test_three_hundred_instances_leave_no_globals(cold: dict[str, Any]) -> None:
    """A warm load adds nothing to the user's module globals."""
    work = restore(cold)
    report = run({"source": str(work / "model.py"), "instances": 300, "calls": [{}]}, work)
    assert report["unique_graphs"] == 0 and report["calls"] == [True], report
    assert report["globals_left"] == [], report["globals_left"][:5]


def test_file_moved_into_another_models_folder_is_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CC-14/CC-17: A's file copied under B's <model_info> is not loaded for B (the same method body)."""
    (tmp_path / "model.py").write_text(TWO_MODELS)
    job = {"source": str(tmp_path / "model.py"), "calls": [{}]}
    monkeypatch.setenv("WHICH", "ReluNet")
    run(job, tmp_path)
    (relu_file,) = cache_files(tmp_path / ".torchair_cache")
    monkeypatch.setenv("WHICH", "SigmoidNet")
    run(job, tmp_path)
    sigmoid_file = next(p for p in cache_files(tmp_path / ".torchair_cache") if p != relu_file)
    shutil.copy2(relu_file, sigmoid_file)
    report = run(job, tmp_path)
    assert report["calls"] == [True] and report["unique_graphs"] == 1, report
    assert any("written for" in w and "ReluNet.run" in w for w in report["warnings"]), report["warnings"]


TWO_MODELS = '''\
import os

import torch

import torchair_ref


class ReluNet(torch.nn.Module):
    def __init__(self, options):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())
        self.cached = torchair_ref.inference.cache_compile(self.run, **options)

    def run(self, x):
        return self.net(x)


class SigmoidNet(torch.nn.Module):
    def __init__(self, options):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Sigmoid())
        self.cached = torchair_ref.inference.cache_compile(self.run, **options)

    def run(self, x):
        return self.net(x)


def build(options):
    return {"ReluNet": ReluNet, "SigmoidNet": SigmoidNet}[os.environ["WHICH"]](options)
'''


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("plain")
    (work / "model.py").write_text(PLAIN)
    for dynamic in (True, False):
        run({"source": str(work / "model.py"), "dynamic": dynamic, "calls": [{}]}, work)
    shutil.copytree(work / ".torchair_cache", work / "pristine")
    return {"work": work}


MISMATCHES = [{"dtype": "float16"}, {"dtype": "bfloat16"}, {"dtype": "int8"}, {"shape": [4, 8, 2]},
              {"device": "meta"}, {"shape": [8, 4]}]


def test_inputs_that_do_not_fit_never_reach_a_kernel(plain: dict[str, Any]) -> None:
    """CC-12/CC-15: after a first warm call, a dtype, rank or device the graph was not compiled for is traced
    afresh (a warning) and gives the eager answer; run under faulthandler, nothing crashes."""
    work = restore(plain, PLAIN)
    n = len(MISMATCHES)
    calls = [{"instance": i} for i in range(n)] + [{**m, "instance": i} for i, m in enumerate(MISMATCHES)]
    report = run({"source": str(work / "model.py"), "instances": n, "calls": calls}, work, faulthandler=True)
    assert not report["errors"], report["errors"]
    assert report["calls"] == [True] * (2 * n), report
    first_recompiles = [w for w in report["warnings"] if "recompiled (trace 2)" in w]
    # every mismatch but the last (a new size on dynamic dims, which the graph serves) is traced afresh
    # a rank the graph was not traced for fails the guard on the strides Dynamo related (CC-21) before the input check
    for wanted in ("got torch.float16", "got torch.bfloat16", "got torch.int8",
                   "L['x'].stride()[0] == L['x'].size()[1]",
                   "got meta"):
        assert sum(wanted in w for w in first_recompiles) == 1, (wanted, first_recompiles)
    assert len(first_recompiles) == n - 1, first_recompiles
    assert "Fatal Python error" not in report["stderr"]


def test_static_graph_new_shape_after_first_warm_call_recompiles(plain: dict[str, Any]) -> None:
    """CC-12/CC-15: dynamic=False, second process: the first call fits, a later new shape recompiles as in a
    cold process; a first call of another shape is CC-15's AssertionError."""
    work = restore(plain, PLAIN)
    job = {"source": str(work / "model.py"), "dynamic": False, "calls": [{}, {"shape": [5, 8]}]}
    report = run(job, work)
    assert report["calls"] == [True, True] and not report["errors"], report
    assert any("recompiled" in w and "expected size 5==4" in w for w in report["warnings"]), report["warnings"]
    work = restore(plain, PLAIN)
    first = run({**job, "calls": [{"shape": [5, 8]}]}, work)
    assert first["errors"] and "expected size 5==4, stride 8==8 at dim=0" in first["errors"][0], first


FACTOR_MODEL = '''\
import os

import torch

import torchair_ref


class Scaled(torch.nn.Module):
    def __init__(self, options):
        super().__init__()
        self.double = os.environ["DOUBLE"] == "1"
        self.cached = torchair_ref.inference.cache_compile(self.run, **options)

    def run(self, x):
        if self.double:
            return x * 2.0
        return x - 1.0


def build(options):
    return Scaled(options)
'''


def test_python_value_specialised_on_is_rechecked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CC-21: a module attribute the graph specialised on (a branch on `self.double`) is one of Dynamo's guards: a
    warm start whose module holds another value compiles afresh and adds a variant to the file (a warning naming the
    guard, CC-23); the next process with that value loads it."""
    (tmp_path / "model.py").write_text(FACTOR_MODEL)
    job = {"source": str(tmp_path / "model.py"), "calls": [{}]}
    monkeypatch.setenv("DOUBLE", "1")
    run(job, tmp_path)
    monkeypatch.setenv("DOUBLE", "0")
    warm = run(job, tmp_path)
    assert warm["unique_graphs"] == 1 and warm["calls"] == [True], warm
    assert any("adding a variant" in w and "double" in w for w in warm["warnings"]), warm["warnings"]
    again = run(job, tmp_path)
    assert again["unique_graphs"] == 0 and again["calls"] == [True] and not again["warnings"], again
