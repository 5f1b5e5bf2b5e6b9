"""Tests of options.json (EX-3/EX-4): the GE options an export was compiled with, by GE's option names."""

from __future__ import annotations

import json

import pytest
import torch

from tests.reference.export import checks, models
from torchair_ref import CompilerConfig
from torchair_ref.export import dynamo_export
from torchair_ref.export.ge_options import (
    COMPILE_OPTION_NAMES,
    EXECUTE_OPTION_NAMES,
    ge_options,
    options_document,
    render,
)

EMPTY = {"global": {}, "session": {}, "graph": {}}


def test_document_splits_global_and_local_by_ge_option_names():
    """EX-3: global options go to global and session, local ones to graph, each filtered to compile/execute names."""
    global_ = {"ge.enableSingleStream": "true", "ge.exec.staticMemoryPolicy": "2", "frozen_parameter": "0"}
    local = {"ge.deterministic": "1", "ge.exec.dumpStep": "0|1", "ge.exportCompileStat": "1", "mode": "x"}
    assert options_document(local, global_) == {
        "compile options": {"global": {"ge.enableSingleStream": "true"}, "session": {"ge.enableSingleStream": "true"},
                            "graph": {"ge.deterministic": "1", "ge.exportCompileStat": "1"}},
        "execute options": {"global": {"ge.exec.staticMemoryPolicy": "2"},
                            "session": {"ge.exec.staticMemoryPolicy": "2"}, "graph": {"ge.exec.dumpStep": "0|1"}},
    }  # fmt: skip


def test_option_name_lists_are_disjoint_ge_names():
    """EX-3: the compile and execute name lists (upstream 2.14.0's) are GE option names, none in both."""
    assert not set(COMPILE_OPTION_NAMES) & set(EXECUTE_OPTION_NAMES)
    assert all(name.startswith("ge.") for name in COMPILE_OPTION_NAMES + EXECUTE_OPTION_NAMES)
    assert "ge.exportCompileStat" in COMPILE_OPTION_NAMES


@pytest.mark.parametrize("single_stream, deterministic", [(False, False), (True, True)])
def test_reference_options_by_ge_name(single_stream, deterministic):
    """EX-3: the reference's config stands for ge.enableSingleStream (global); torch's determinism is a graph option."""
    config = CompilerConfig()
    config.ge_config.enable_single_stream = single_stream
    local, global_ = ge_options(*config.as_dict(), deterministic=deterministic)
    assert global_ == {"ge.enableSingleStream": "true" if single_stream else "false"}, global_
    assert local == {"ge.deterministic": "1" if deterministic else "0"}, local


def test_export_writes_options_json(tmp_path):
    """EX-3: options.json beside the .air, as json.dump(indent=4) writes it, with the config's GE options."""
    config = checks.config()
    config.ge_config.enable_single_stream = True
    dynamo_export(torch.randn(2, 4), model=models.TwoLayer(), export_path=str(tmp_path), config=config)
    text = (tmp_path / "options.json").read_text()
    document = json.loads(text)
    assert text == render(document).decode() == json.dumps(document, indent=4), text
    single = {"ge.enableSingleStream": "true"}
    assert document == {
        "compile options": {"global": single, "session": single, "graph": {"ge.deterministic": "0"}},
        "execute options": EMPTY,
    }, document
