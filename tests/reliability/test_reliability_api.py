"""CC-1..CC-3, RC-1, RC-3, EX-1..EX-3: bad input to the three APIs, generated with hypothesis.

Every wrong value of every argument gets a specific exception whose message names the argument (or, where SPEC
fixes the wording, says what SPEC says), raised before anything is traced, printed or written: the test's
directory is byte-for-byte the same afterwards and Dynamo traced nothing.
"""
from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch._dynamo.utils import counters

import torchair_ref
from tests.reference.export import models
from tests.reliability.faults import Net, budget, eager_config, snapshot
from torchair_ref.export import dynamo_export
from torchair_ref.inference import cache_compile, readable_cache

#: values of no path, bool or config type; each API's own strategies add the ones that are wrong only for it
JUNK = st.one_of(
    st.integers(-3, 3), st.floats(allow_nan=False, width=16), st.binary(min_size=1, max_size=4), st.none(),
    st.lists(st.integers(0, 2), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(0, 1), max_size=1),
    st.just(object()), st.just(print),
)
NOT_BOOL = st.one_of(JUNK.filter(lambda v: not isinstance(v, bool)), st.text(max_size=4), st.sampled_from([0, 1]))
NOT_PATH = st.one_of(JUNK.filter(lambda v: v is not None), st.booleans())
BAD_RANK = st.one_of(st.integers(max_value=-1), st.booleans(), st.floats(allow_nan=False), st.text(max_size=3))
#: directory arguments that are paths, but of a file or below one (made by `_place`)
FILE_PATHS = st.sampled_from(["a file", "below a file"])


def _place(kind: Any, base: Path) -> Any:
    """Turn a FILE_PATHS draw into a path under `base` (a file is created there); other values pass through."""
    if kind not in ("a file", "below a file"):
        return kind
    existing = base / "existing_file"
    existing.write_text("in the way")
    return str(existing if kind == "a file" else existing / "sub" / "dir")


def _sandbox(tmp_path: Path, n: int) -> Path:
    base = tmp_path / f"example{n}"
    base.mkdir()
    os.chdir(base)
    return base


def _check(call: Callable[[], Any], base: Path, names: tuple[str, ...], errors: tuple[type, ...], story: str) -> None:
    """`call` raises one of `errors` naming one of `names`, and changes nothing under `base`, traces nothing."""
    before, graphs = snapshot(base), counters["stats"]["unique_graphs"]
    with pytest.raises(errors) as caught:
        call()
    message = str(caught.value)
    found = f"{type(caught.value).__name__}({message!r})"
    assert any(name in message for name in names), f"{story}: {found} names none of {names}"
    assert snapshot(base) == before, f"{story}: files changed: {sorted(snapshot(base))}"
    assert counters["stats"]["unique_graphs"] == graphs, f"{story}: Dynamo traced before the error"


@st.composite
def bad_cache_compile_arguments(draw: st.DrawFn) -> tuple[str, Any, tuple[type, ...]]:
    """One argument of cache_compile with a wrong value, and the exceptions that may report it."""
    name = draw(st.sampled_from(["dynamic", "ge_cache", "cache_dir", "global_rank", "tp_rank", "pp_rank", "config",
                                 "backend", "custom_decompositions"]), label="argument")
    if name in ("dynamic", "ge_cache"):
        return name, draw(NOT_BOOL, label=name), (TypeError,)
    if name == "cache_dir":
        value = draw(st.one_of(NOT_PATH, FILE_PATHS), label=name)
        return name, value, (TypeError, NotADirectoryError)
    if name.endswith("_rank"):
        return name, draw(BAD_RANK, label=name), (ValueError, TypeError)
    if name == "config":
        return name, draw(st.one_of(NOT_PATH, st.text(max_size=4)), label=name), (TypeError,)
    if name == "backend":
        value = draw(st.one_of(NOT_PATH, st.just(functools.partial(print)), st.just(lambda gm, inputs: gm)), label=name)
        return name, value, (ValueError, TypeError)
    # An unknown keyword is no bad input: CC-1 accepts and ignores it (with a warning).
    return name, draw(NOT_PATH.filter(lambda v: not isinstance(v, dict)), label=name), (TypeError,)


@pytest.mark.reliability(
    "Bad input, `cache_compile`: wrong types or values for each argument (`dynamic=\"yes\"`, `cache_dir=3`, "
    "negative or bool ranks, a `cache_dir` that is or is below a file, ...)",
    "TypeError/ValueError/NotADirectoryError naming the argument, at the `cache_compile` call; nothing created, "
    "nothing traced",
)
def test_cache_compile_bad_arguments(tmp_path: Path, record_property: Callable) -> None:
    """CC-1, CC-3, CC-6: a wrong argument is reported at cache_compile, by name, before anything happens."""
    tried = []

    @settings(max_examples=budget("cheap"), deadline=None, database=None)
    @given(bad=bad_cache_compile_arguments())
    @example(bad=("dynamic", "yes", (TypeError,)))
    @example(bad=("cache_dir", 3, (TypeError,)))
    @example(bad=("cache_dir", "a file", (NotADirectoryError,)))
    @example(bad=("cache_dir", "below a file", (NotADirectoryError,)))
    @example(bad=("tp_rank", -1, (ValueError,)))
    @example(bad=("global_rank", True, (ValueError,)))
    def check(bad: tuple[str, Any, tuple[type, ...]]) -> None:
        base = _sandbox(tmp_path, len(tried))
        name, value, errors = bad
        value = _place(value, base)
        tried.append(name)
        _check(lambda: cache_compile(Net().forward, **{name: value}), base, (name,), errors,
               f"cache_compile({name}={value!r})")

    check()
    record_property("cases", len(tried))


@st.composite
def bad_readable_arguments(draw: st.DrawFn) -> tuple[dict, tuple[str, ...], tuple[type, ...]]:
    name = draw(st.sampled_from(["cache_bin", "print_output", "file"]), label="argument")
    if name == "print_output":
        return {"print_output": draw(NOT_BOOL, label=name)}, (name,), (TypeError,)
    kinds = ["wrong type", "NUL"] + (["a directory", "below a file", "a symlink"] if name == "file" else
                                     ["missing", "a directory"])
    kind = draw(st.sampled_from(kinds), label=f"{name} is")
    value = {"wrong type": draw(NOT_PATH, label=name), "NUL": "x\0y", "a directory": "a directory",
             "below a file": "a file", "a symlink": "a symlink", "missing": "missing"}[kind]
    if kind == "wrong type":
        return {name: value}, (name,), (TypeError,)
    if kind == "NUL":
        return {name: value}, (name,), (ValueError,)
    # These name the path, which the test adds; SPEC words some ("Cache file ... is not exists")
    return {name: value}, (name,), (ValueError, OSError)


@pytest.mark.reliability(
    "Bad input, `readable_cache`: wrong types for `cache_bin`, `print_output`, `file`; NUL bytes; a missing or "
    "directory `cache_bin`; a `file` that is a directory, a symlink or below a file",
    "TypeError/ValueError/IsADirectoryError/NotADirectoryError naming the argument (or SPEC's wording naming the "
    "path); nothing printed, nothing written",
)
def test_readable_cache_bad_arguments(tmp_path: Path, record_property: Callable,
                                      capsys: pytest.CaptureFixture) -> None:
    """RC-1, RC-3: a wrong argument of readable_cache is reported by name before anything is printed or written."""
    cached = cache_compile(Net().forward, config=eager_config(), cache_dir=str(tmp_path / "cache"))
    cached(torch.ones(2, 4))
    good = cached.cache_file
    tried = []

    @settings(max_examples=budget("cheap"), deadline=None, database=None)
    @given(bad=bad_readable_arguments())
    @example(bad=({"cache_bin": 3}, ("cache_bin",), (TypeError,)))
    @example(bad=({"file": "a directory"}, ("file",), (OSError,)))
    def check(bad: tuple[dict, tuple[str, ...], tuple[type, ...]]) -> None:
        base = _sandbox(tmp_path, len(tried))
        arguments, names, errors = bad
        tried.append(arguments)
        for key, value in list(arguments.items()):
            if value == "a file":
                (base / "f").write_text("in the way")
                arguments[key] = str(base / "f" / "out.py")
            elif value == "a directory":
                (base / "adir").mkdir()
                arguments[key] = str(base / "adir")
            elif value == "a symlink":
                (base / "target.py").write_text("")
                (base / "link.py").symlink_to(base / "target.py")
                arguments[key] = str(base / "link.py")
            elif value == "missing":
                arguments[key] = str(base / "missing")
            if arguments[key] != value:
                names += (arguments[key],)
        call = {"cache_bin": good, "print_output": True, **arguments}
        _check(lambda: readable_cache(**call), base, names, errors, f"readable_cache(**{call!r})")
        assert capsys.readouterr().out == "", f"readable_cache(**{call!r}) printed before failing"

    check()
    record_property("cases", len(tried))


@st.composite
def bad_export_arguments(draw: st.DrawFn) -> tuple[dict, str, tuple[type, ...]]:
    name = draw(st.sampled_from(["model", "export_path", "export_name", "dynamic", "config"]), label="argument")
    if name == "model":
        return {name: draw(st.one_of(NOT_PATH, st.just(lambda x: x)), label=name)}, name, (TypeError,)
    if name == "export_path":
        value = draw(st.one_of(NOT_PATH, FILE_PATHS), label=name)
        return {name: value}, name, (TypeError, NotADirectoryError)
    if name == "export_name":
        value = draw(st.one_of(NOT_PATH.filter(lambda v: not isinstance(v, str)),
                               st.sampled_from(["", ".", "..", "/", "a/..", "../..", "./", "x/y/../.."])), label=name)
        return {name: value}, name, (TypeError, ValueError)
    if name == "dynamic":
        return {name: draw(NOT_BOOL, label=name)}, name, (TypeError,)
    return {name: draw(st.one_of(NOT_PATH.filter(lambda v: v is not None), st.text(max_size=3)), label=name)}, name, (
        TypeError,)


@pytest.mark.reliability(
    "Bad input, `dynamo_export`: wrong types for each argument, an `export_name` with no usable last component "
    "(`..`, `a/..`, `/`), an `export_path` that is or is below a file",
    "TypeError/ValueError/NotADirectoryError naming the argument, before the capture; nothing written",
)
def test_dynamo_export_bad_arguments(tmp_path: Path, record_property: Callable) -> None:
    """EX-1, EX-3: a wrong argument of dynamo_export is reported by name before anything is traced or written."""
    tried = []

    @settings(max_examples=budget("cheap"), deadline=None, database=None)
    @given(bad=bad_export_arguments())
    @example(bad=({"export_name": ".."}, "export_name", (ValueError,)))
    @example(bad=({"export_path": "below a file"}, "export_path", (NotADirectoryError,)))
    @example(bad=({"config": 3}, "config", (TypeError,)))
    def check(bad: tuple[dict, str, tuple[type, ...]]) -> None:
        base = _sandbox(tmp_path, len(tried))
        arguments, name, errors = bad
        arguments = {key: _place(value, base) for key, value in arguments.items()}
        tried.append(name)
        call = {"model": models.TwoLayer(), "export_path": str(base / "out"), **arguments}
        _check(lambda: dynamo_export(torch.randn(2, 4), **call), base, (name,), errors, f"dynamo_export({arguments!r})")

    check()
    record_property("cases", len(tried))


NAME_PARTS = st.sampled_from(["..", ".", "a", "b.c", "..x", "x..", "~"])


@pytest.mark.reliability(
    "Bad input, `dynamo_export`: `export_name` made of `..`, `.` and names (`../../x`, `a/../b`, ...)",
    "only the last component is used: the `.air` and `dynamo.pbtxt` land in `export_path`, nothing outside it",
)
def test_export_name_never_escapes_export_path(tmp_path: Path, record_property: Callable) -> None:
    """EX-1: whatever `..` an export_name holds, the files are written in export_path under its last component."""
    tried = []

    @settings(max_examples=budget("compile"), deadline=None, database=None)
    @given(parts=st.lists(NAME_PARTS, min_size=1, max_size=5).filter(
        lambda p: os.path.basename(os.path.normpath(os.path.join(*p))) not in ("", ".", "..")))
    def check(parts: list[str]) -> None:
        base = _sandbox(tmp_path, len(tried))
        name = "/".join(parts)
        tried.append(name)
        out = base / "deep" / "out"
        dynamo_export(torch.randn(2, 4), model=models.TwoLayer(), export_path=str(out), export_name=name,
                      config=torchair_ref.CompilerConfig())
        last = os.path.basename(os.path.normpath(name))
        found = sorted(str(p.relative_to(base)) for p in base.rglob("*") if p.is_file())
        wanted = sorted([f"deep/out/{last}.air", "deep/out/dynamo.pbtxt", "deep/out/options.json"])
        assert found == wanted, f"export_name={name!r}: {found}"

    check()
    record_property("cases", len(tried))
