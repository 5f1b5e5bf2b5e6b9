"""SPEC section 3: ``readable_cache`` (RC-1..RC-3)."""

from __future__ import annotations

import contextlib
import io
import os
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torchair_conformance import harness, models, oracle, profiles
from torchair_conformance import strategies as cst
from torchair_conformance.assertions import assert_mode_0600

# IMPL-2: every test here needs a cache file written on this device.
pytestmark = [pytest.mark.requires("cache")]


def _cold_cache(impl, data, base):
    """Compile a drawn module into ``base``; return (bound method, options, path of the cache file)."""
    module = data.draw(cst.module_specs(max_depth=3), label="module")
    method = data.draw(st.sampled_from(models.METHODS), label="method")
    options = data.draw(cst.config_options(fast=harness.fast_options(impl), global_options=False), label="config")
    dynamic = data.draw(st.booleans(), label="dynamic")
    inputs = data.draw(cst.input_specs(module, layouts=("contiguous",)), label="inputs")
    harness.fresh_dynamo()
    m = models.build_module(module["structure"], module["seed"])
    func = getattr(m, method)
    impl.cache_compile(func, config=harness.make_config(impl, options), dynamic=dynamic,
                       cache_dir=str(base / "cache"))(*models.make_inputs(inputs))
    found = harness.cache_files(base / "cache")
    assert len(found) == 1, f"expected one cache file to read, found {found!r}"
    return func, options, found[0]


def _check_text(impl, text, func, options):
    lines = text.splitlines()
    assert "=" * 100 in lines, "RC-2: the readable text must contain a line of 100 '='"
    assert func.__qualname__ in text, f"RC-2: the metadata must name {func.__qualname__!r}"
    assert re.search(r"\d{4}-\d{2}-\d{2}", text), "RC-2: the metadata must carry a date"
    assert re.search(r"parameter", text, re.I), "RC-2: the inputs must show their parameter role"
    assert re.search(r"user[ _-]?input", text, re.I), "RC-2: the inputs must show the user-input role"
    for option in oracle.options_string(harness.make_config(impl, options).as_dict()).split(","):
        assert option in text, f"RC-2: compile option {option!r} missing from the readable text"
    assert re.search(r"\b(LOAD_FAST|LOAD_GLOBAL|LOAD_ATTR|RETURN_VALUE)\b", text), (
        "RC-2: the caller-frame disassembly is missing")


@pytest.mark.clause("RC-2")
@given(data=st.data())
@settings(max_examples=profiles.examples("compile"))
def test_readable_text_shows_metadata_graph_inputs_options_and_bytecode(impl, data):
    print_output = data.draw(st.booleans(), label="print_output")
    with harness.scratch() as base:
        func, options, path = _cold_cache(impl, data, base)
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout):
            text = impl.readable_cache(path, print_output=print_output)
        assert isinstance(text, str), f"RC-2: readable_cache must return str, got {type(text)!r}"
        _check_text(impl, text, func, options)
        if print_output:
            assert text.strip() in stdout.getvalue(), "RC-2: print_output=True must print the text"
        else:
            assert stdout.getvalue() == "", f"RC-2: print_output=False printed {stdout.getvalue()[:200]!r}"
        assert os.path.exists(path), "RC-1: readable_cache must not remove the cache"


@pytest.mark.clause("RC-3")
@given(data=st.data())
@settings(max_examples=profiles.examples("compile"))
def test_readable_file_is_commented_text_then_code_mode_0600(impl, data):
    segments = data.draw(cst.path_segments, label="output_dirs")
    pre_existing = data.draw(st.booleans(), label="file_exists_0600")
    with harness.scratch() as base:
        func, options, path = _cold_cache(impl, data, base)
        out = base.joinpath("out", *segments, "readable.py")
        if pre_existing:
            out.parent.mkdir(parents=True)
            out.write_text("stale\n")
            os.chmod(out, 0o600)
        text = impl.readable_cache(path, print_output=False, file=str(out))
        content = out.read_text()
        assert_mode_0600(str(out))
        file_lines = content.splitlines()
        for i, line in enumerate(text.splitlines()):
            assert file_lines[i].rstrip() == f"# {line}".rstrip(), (
                f"RC-3: line {i} of {out} should be the comment {('# ' + line)!r}, found {file_lines[i]!r}")
        assert len(file_lines) > len(text.splitlines()), "RC-3: the generated code must follow the comments"
        compile(content, str(out), "exec")


@pytest.mark.clause("RC-1")
@pytest.mark.parametrize("problem", ["missing", "symlink", "mode 0644", "truncated"])
@given(data=st.data())
@settings(max_examples=profiles.examples("process"))
def test_readable_rejects_missing_symlinked_and_unloadable_files(impl, problem, data):
    with harness.scratch() as base:
        _, _, path = _cold_cache(impl, data, base)
        target = path
        if problem == "missing":
            target = str(base / "no" / "compiled_module")
            with pytest.raises(ValueError) as info:
                impl.readable_cache(target, print_output=False)
            assert f"Cache file {target} is not exists" in str(info.value), repr(info.value)
            return
        if problem == "symlink":
            target = str(base / "link")
            os.symlink(path, target)
            with pytest.raises(ValueError) as info:
                impl.readable_cache(target, print_output=False)
            assert "can not be a symlink" in str(info.value), repr(info.value)
        else:
            if problem == "mode 0644":
                os.chmod(path, 0o644)
            else:
                content = open(path, "rb").read()
                open(path, "wb").write(content[: len(content) // 2])
            with pytest.raises(Exception):  # noqa: B017 - any implementation's own error type
                impl.readable_cache(path, print_output=False)
        assert os.path.exists(path), f"RC-1: readable_cache deleted {path} after a {problem} error"


@pytest.mark.clause("RC-3")
@pytest.mark.parametrize("problem", ["symlink", "mode 0644", "mode 0640"])
@given(data=st.data())
@settings(max_examples=profiles.examples("process"))
def test_readable_rejects_symlinked_or_loose_output_files(impl, problem, data):
    with harness.scratch() as base:
        _, _, path = _cold_cache(impl, data, base)
        out = base / "out.py"
        if problem == "symlink":
            (base / "real.py").write_text("")
            os.chmod(base / "real.py", 0o600)
            os.symlink(base / "real.py", out)
            with pytest.raises(ValueError):
                impl.readable_cache(path, print_output=False, file=str(out))
            assert (base / "real.py").read_text() == "", "RC-3: the symlink's target was written"
        else:
            out.write_text("keep\n")
            os.chmod(out, int(problem.split()[1], 8))
            with pytest.raises(Exception):  # noqa: B017 - any implementation's own error type
                impl.readable_cache(path, print_output=False, file=str(out))
            assert out.read_text() == "keep\n", f"RC-3: the refused {problem} output file was written"
