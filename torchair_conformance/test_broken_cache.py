"""SPEC CC-17 (a broken cache is never trusted and never crashes the call) and CC-11 (no partial file is
accepted)."""

from __future__ import annotations

import logging
import os
import pickle

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torchair_conformance import harness, models, profiles
from torchair_conformance import strategies as cst
from torchair_conformance.assertions import assert_logged, assert_mode_0600, assert_outputs_close

# IMPL-2: every test here needs a cache file written on this device.
pytestmark = [pytest.mark.requires("cache")]

BREAKAGES = ("truncated", "corrupt bytes", "random bytes", "empty", "foreign pickle", "wrong mode", "wrong owner",
             "directory instead of file")


class _Trap:
    """Unpickling this creates ``path``: proof that the implementation executed untrusted pickle code."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


@st.composite
def breakages(draw: st.DrawFn, kind: str, size: int) -> dict:
    """The drawn details of one breakage ``kind`` of a file of ``size`` bytes."""
    spec = {"kind": kind}
    if kind == "truncated":
        spec["keep"] = draw(st.integers(0, max(0, size - 1)), label="bytes_kept")
    elif kind == "corrupt bytes":
        spec["offsets"] = draw(st.lists(st.integers(0, max(0, size - 1)), min_size=1, max_size=8, unique=True),
                               label="flipped_offsets")
    elif kind == "random bytes":
        spec["bytes"] = draw(st.binary(min_size=1, max_size=512), label="content")
    elif kind == "wrong mode":
        spec["mode"] = draw(st.sampled_from([0o644, 0o640, 0o604, 0o666, 0o700, 0o400, 0o777]), label="mode")
    return spec


def _break(path: str, spec: dict, trap: str) -> None:
    kind = spec["kind"]
    data = open(path, "rb").read()
    if kind == "truncated":
        open(path, "wb").write(data[: spec["keep"]])
    elif kind == "corrupt bytes":
        buf = bytearray(data)
        for offset in spec["offsets"]:
            buf[offset] ^= 0xFF
        open(path, "wb").write(bytes(buf))
    elif kind == "random bytes":
        open(path, "wb").write(spec["bytes"])
    elif kind == "empty":
        open(path, "wb").close()
    elif kind == "foreign pickle":
        open(path, "wb").write(pickle.dumps(_Trap(trap)))
    elif kind == "wrong mode":
        os.chmod(path, spec["mode"])
    elif kind == "wrong owner":
        os.chown(path, 65534, 65534)
    elif kind == "directory instead of file":
        os.remove(path)
        os.mkdir(path)
    if kind not in ("wrong mode", "wrong owner", "directory instead of file"):
        os.chmod(path, 0o600)


def breakage_params():
    """``BREAKAGES`` for ``parametrize``: giving a file to another user needs root, so that case is skipped
    on a non-root host when collected, not inside the property."""
    needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the cache file to another user")
    return [pytest.param(k, marks=needs_root) if k == "wrong owner" else k for k in BREAKAGES]


@pytest.mark.clause("CC-17", "CC-11")
@pytest.mark.parametrize("kind", breakage_params())
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("compile", len(BREAKAGES)))
def test_broken_cache_is_removed_and_recompiled(impl, kind, data):
    module = data.draw(cst.module_specs(max_depth=3), label="module")
    method = data.draw(st.sampled_from(models.METHODS), label="method")
    dynamic = data.draw(st.booleans(), label="dynamic")
    options = data.draw(cst.config_options(fast=harness.fast_options(impl), global_options=False), label="config")
    inputs = data.draw(cst.input_specs(module, layouts=("contiguous",)), label="inputs")
    x = models.make_inputs(inputs)
    with harness.scratch() as base:
        root = str(base / "cache")
        harness.fresh_dynamo()
        m = models.build_module(module["structure"], module["seed"])
        impl.cache_compile(getattr(m, method), config=harness.make_config(impl, options), dynamic=dynamic,
                           cache_dir=root)(*x)
        (path,) = harness.cache_files(root)
        spec = data.draw(breakages(kind, os.path.getsize(path)), label="breakage")
        trap = str(base / "trap_was_executed")
        _break(path, spec, trap)
        marker = os.path.join(os.path.dirname(path), "left_by_the_test")
        open(marker, "w").close()

        harness.fresh_dynamo()
        m2 = models.build_module(module["structure"], module["seed"])
        with harness.capture(impl.logger) as captured:
            out = impl.cache_compile(getattr(m2, method), config=harness.make_config(impl, options), dynamic=dynamic,
                                     cache_dir=root)(*x)
        assert not os.path.exists(trap), f"CC-17: the {spec['kind']} cache was executed as trusted code"
        assert_logged(captured, logging.WARNING, [path], what=f"CC-17: a warning naming the {kind} cache")
        assert not os.path.exists(marker), f"CC-17: the <func> directory was not removed (found {marker})"
        assert harness.unique_graphs() >= 1, "CC-17: the function must be compiled afresh"
        with torch.no_grad():
            assert_outputs_close(out, getattr(m2, method)(*x), what=f"result after a {spec['kind']} cache")
        found = harness.cache_files(root)
        assert found == [path], f"expected a fresh cache at {path}, found {found}"
        assert_mode_0600(path)
