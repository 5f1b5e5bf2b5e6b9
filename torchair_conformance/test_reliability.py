"""SPEC CC-11, CC-14, CC-17 and RC-1 under faults: a cold process killed at any moment, eight cold processes racing
for one path, and ``readable_cache`` on every kind of broken cache.

These hold for any implementation: the kill moment is drawn from outside (a delay after the worker starts, or after
the first entry appears under the cache root), not from inside the implementation. The reference's own, finer
checks (a kill at each step of its write, its temporary files) are in ``tests/reliability/test_reliability_*.py``.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torchair_conformance import harness, models, process, profiles
from torchair_conformance import strategies as cst
from torchair_conformance.assertions import assert_mode_0600, assert_outputs_close, assert_worker_ok, max_abs_diff_bound
from torchair_conformance.test_broken_cache import BREAKAGES, _break, breakage_params, breakages

pytestmark = [pytest.mark.slow, pytest.mark.requires("cache")]


def _job(impl, draw: st.DrawFn, root: str) -> dict[str, Any]:
    module = draw(cst.module_specs(max_depth=3), label="module")
    method = draw(st.sampled_from(models.METHODS), label="method")
    options = draw(cst.config_options(fast=harness.fast_options(impl)), label="config")
    dynamic = draw(st.booleans(), label="dynamic")
    inputs = draw(cst.input_specs(module, layouts=("contiguous",)), label="inputs")
    return {"module": module, "method": method, "config": [list(o) for o in options],
            "cache_compile": {"dynamic": dynamic, "cache_dir": root}, "calls": [{"inputs": inputs}],
            "compare_eager": True}


def _start(job: Mapping[str, Any], impl: str, folder: Path) -> process.Started:
    """A cold worker on ``job``, running in ``folder``."""
    return process.start("torchair_conformance.workers.cold", {**job, "impl": impl}, folder, cwd=folder,
                         env=harness.worker_env(impl))


def _eager_ok(result: Mapping[str, Any], job: Mapping[str, Any], what: str) -> None:
    assert_worker_ok(result, what=what)
    module = job["module"]
    m = models.build_module(module["structure"], module["seed"], module.get("dtype", "float32"))
    with torch.no_grad():
        bound = max_abs_diff_bound(getattr(m, job["method"])(*models.make_inputs(job["calls"][0]["inputs"])))
    assert result["eager_max_diff"] and result["eager_max_diff"][0] <= bound, (
        f"{what}: max |output - eager| = {result['eager_max_diff']} > {bound}")


def _load_in_process(impl, job: Mapping[str, Any]) -> None:
    """CC-14: the cache the workers left loads here without tracing, and gives eager's outputs."""
    harness.fresh_dynamo()
    module = models.build_module(job["module"]["structure"], job["module"]["seed"])
    method = getattr(module, job["method"])
    x = models.make_inputs(job["calls"][0]["inputs"])
    out = impl.cache_compile(method, config=harness.make_config(impl, [tuple(o) for o in job["config"]]),
                             **job["cache_compile"])(*x)
    assert harness.unique_graphs() == 0, "CC-11/CC-14: the cache left behind did not load (the function was traced)"
    with torch.no_grad():
        assert_outputs_close(out, method(*x), what="the cache left behind, loaded")


KILL_MOMENTS = st.one_of(
    st.fixed_dictionaries({"after_start_s": st.floats(0.5, 8.0)}),
    st.fixed_dictionaries({"after_first_entry_s": st.sampled_from([0.0, 0.001, 0.005, 0.02, 0.1])}),
)


def _kill_at(proc: subprocess.Popen, moment: Mapping[str, float], root: str) -> str:
    """SIGKILL ``proc`` at ``moment``; what happened, for the story."""
    started = time.monotonic()
    while proc.poll() is None:
        elapsed = time.monotonic() - started
        if "after_start_s" in moment and elapsed >= moment["after_start_s"]:
            break
        if "after_first_entry_s" in moment and os.path.isdir(root) and os.listdir(root):
            time.sleep(moment["after_first_entry_s"])
            break
        if elapsed > process.DEFAULT_TIMEOUT_S:
            break
        time.sleep(0.001)
    if proc.poll() is not None:
        return f"the worker finished (exit {proc.returncode}) before the kill"
    proc.kill()
    proc.wait()
    return f"killed after {time.monotonic() - started:.3f} s"


@pytest.mark.reliability(
    "Crash during save, any implementation: a cold worker SIGKILLed at a drawn moment (0.5-8 s after start, or "
    "0-100 ms after the first entry appears under the cache root)",
    "the next fresh process gets eager's outputs without error, loading the file or compiling (with a warning if "
    "it found a file it did not use); the file then left loads without tracing",
)
@pytest.mark.clause("CC-11", "CC-17", "CC-14")
def test_cold_process_killed_at_any_moment(impl, record_property: Callable) -> None:
    """CC-11, CC-17, CC-14: whenever a cold process dies, what it left never loads wrong and never crashes."""
    tried: list[str] = []

    @settings(max_examples=profiles.examples("process"))
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        with harness.scratch() as base:
            root = str(base / "cache")
            job = _job(impl, data.draw, root)
            moment = data.draw(KILL_MOMENTS, label="kill moment")
            story = _kill_at(_start(job, impl.name, base / "killed").proc, moment, root)
            tried.append(story)
            found = harness.cache_files(root)
            nxt = harness.run_worker("warm", job, impl=impl.name, cwd=base)
            _eager_ok(nxt, job, f"the process after a cold worker was {story}")
            warned = [m for level, m in nxt["logs"] if level == logging.WARNING]
            if found and nxt["unique_graphs"]:
                assert warned, (f"CC-17: after a cold worker was {story}, {found} was not used but no warning was "
                                f"logged; logs: {nxt['logs']}")
            _load_in_process(impl, job)

    check()
    record_property("cases", len(tried))


@pytest.mark.reliability(
    "Race, any implementation: 8 fresh processes cold-compile one cache path at once",
    "all 8 succeed with eager's outputs, bitwise equal to one another; one `compiled_module`, 0600, at the "
    "formula's path; it then loads without tracing",
)
@pytest.mark.clause("CC-11", "CC-14")
def test_eight_processes_cold_compile_one_path(impl, record_property: Callable) -> None:
    """CC-11, CC-14: eight processes compiling one path at once all succeed and leave one valid file."""
    tried: list[int] = []

    # Each example runs eight processes at once: a third of the suite's per-process budget.
    @settings(max_examples=max(1, profiles.examples("process") // 3))
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        with harness.scratch() as base:
            root = str(base / "cache")
            job = _job(impl, data.draw, root)
            procs = [_start(job, impl.name, base / f"w{i}") for i in range(8)]
            results = [p.reply().result for p in procs]
            tried.append(len(results))
            for i, result in enumerate(results):
                _eager_ok(result, job, f"racing worker {i}")
            digests = {json.dumps(r["digests"]) for r in results}
            assert len(digests) == 1, f"CC-11: racing workers disagree: {digests}"
            module = models.build_module(job["module"]["structure"], job["module"]["seed"])
            expected = harness.expected_cache_file(
                impl, module, job["method"], [tuple(o) for o in job["config"]],
                dynamic=job["cache_compile"]["dynamic"], root=root)
            assert harness.cache_files(root) == [expected], (
                f"CC-11: expected one cache file at {expected}, found {harness.cache_files(root)}")
            assert_mode_0600(expected)
            _load_in_process(impl, job)

    check()
    record_property("cases", len(tried))


def _state(path: str) -> tuple:
    info = os.lstat(path)
    content = open(path, "rb").read() if stat.S_ISREG(info.st_mode) else None
    return stat.S_IFMT(info.st_mode), stat.S_IMODE(info.st_mode), info.st_uid, content


@pytest.mark.reliability(
    "Damaged file, readable_cache, any implementation: the broken-cache family's breakages (truncated, corrupt or "
    "random bytes, empty, a pickle with `__reduce__`, wrong mode, other owner, a directory)",
    "an exception; the file (or directory) left exactly as it was; the pickle's canary never appears",
)
@pytest.mark.clause("RC-1", "CC-17")
@pytest.mark.parametrize("kind", breakage_params())
def test_readable_cache_on_a_broken_cache(impl, kind: str, record_property: Callable) -> None:
    """RC-1, CC-17: readable_cache on a broken cache raises, changes nothing and never runs its code."""
    tried: list[str] = []

    @settings(max_examples=profiles.examples_per_case("compile", len(BREAKAGES)))
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        with harness.scratch() as base:
            root = str(base / "cache")
            job = _job(impl, data.draw, root)
            harness.fresh_dynamo()
            module = models.build_module(job["module"]["structure"], job["module"]["seed"])
            impl.cache_compile(getattr(module, job["method"]),
                               config=harness.make_config(impl, [tuple(o) for o in job["config"]]),
                               **job["cache_compile"])(*models.make_inputs(job["calls"][0]["inputs"]))
            (path,) = harness.cache_files(root)
            spec = data.draw(breakages(kind, os.path.getsize(path)), label="breakage")
            trap = str(base / "trap_was_executed")
            _break(path, spec, trap)
            tried.append(spec["kind"])
            before = _state(path)
            with pytest.raises(Exception):  # noqa: B017 - any implementation's own error type
                impl.readable_cache(path, print_output=False)
            assert not os.path.exists(trap), f"RC-1: readable_cache executed the {spec['kind']} cache"
            assert _state(path) == before, f"RC-1: readable_cache changed or deleted the {spec['kind']} cache"

    check()
    record_property("cases", len(tried))
