"""The one fresh-process protocol (torchair_conformance.process): a JSON job in, one JSON result out, a clear error
else."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

import torchair_conformance
from torchair_conformance import process


def test_a_reply_carries_the_result_and_the_output() -> None:
    reply = process.run("torchair_conformance.workers.resolve", {"impl": "json"}, env=process.child_env())
    assert reply.returncode == 0 and reply.result["impl"] == "json", reply
    assert "is not an implementation of the IMPL-1 surface" in reply.result["error"], reply.result


def test_a_child_that_dies_without_a_result_is_an_error_with_its_stderr_tail() -> None:
    with pytest.raises(process.ProcessError) as caught:
        process.run("torchair_conformance.workers.resolve", {"no impl": True}, env=process.child_env())
    message = str(caught.value)
    assert "torchair_conformance.workers.resolve exited 1 without a result" in message, message
    assert "KeyError: 'impl'" in message and '"no impl": true' in message, message


def test_child_env_puts_the_suite_first_and_removes_what_it_maps_to_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", "relative/dir")
    monkeypatch.setenv("TORCHAIR_CACHE_HOME", "/somewhere")
    env = process.child_env(["/extra", None], {"TORCHAIR_CACHE_HOME": None, "X_SET": "1"})
    entries = env["PYTHONPATH"].split(os.pathsep)
    suite_parent = str(Path(torchair_conformance.__file__).resolve().parent.parent)
    assert entries == [suite_parent, "/extra", os.path.abspath("relative/dir")], entries
    assert "TORCHAIR_CACHE_HOME" not in env and env["X_SET"] == "1"
