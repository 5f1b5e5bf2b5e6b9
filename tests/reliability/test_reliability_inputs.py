"""CC-8, CC-17, RC-1, EX-6, EX-7: hostile input never hangs, never reads without bound, never ends in a traceback.

An oversized cache file is refused before it is read; a payload inconsistency is a `BrokenCacheError`; a class or
method name that cannot be a folder runs uncached; the ``.air`` inspector bounds dims and products and maps every
malformed file to its documented exit status; a weight file name never leaves the rank's folder.
"""
from __future__ import annotations

import base64
import marshal
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from torch import nn
from torch._dynamo.utils import counters

from ge_executor import ge_ir
from tests.reliability.faults import (
    Net,
    X,
    assert_one_valid_cache,
    call_again,
    cold,
    eager_config,
    no_hang,
    reseal,
    snapshot,
)
from torchair_ref.export import dynamo_export, externalize_threshold
from torchair_ref.export import inspect as air_inspect
from torchair_ref.inference import artifact, bytecode, cache_compile, readable_cache


@pytest.mark.reliability(
    "Damaged file: a sparse 8 GiB `compiled_module` (0600, ours)",
    "refused from its size before a byte is read: lazy path rebuilt with a warning that says so; readable_cache: "
    "BrokenCacheError; no MemoryError, no hang",
)
def test_oversized_cache_file_is_never_read(tmp_path: Path) -> None:
    """CC-17, RC-1: the length is checked (fstat) before reading."""
    case = cold(tmp_path)
    with open(case.path, "r+b") as handle:
        handle.truncate(8 << 30)
    with no_hang(), pytest.raises(artifact.BrokenCacheError, match="more than"):
        readable_cache(str(case.path), print_output=False)
    out, warned, traced, _ = call_again(case)
    torch.testing.assert_close(out, Net().forward(X).detach(), rtol=0, atol=1e-6)
    assert traced == 1 and any("Discarding" in w and f"{8 << 30} bytes, more than" in w for w in warned), warned
    assert_one_valid_cache(case.root)


def _odd_class(name: str) -> Callable[[], Callable]:
    def make() -> Callable:
        return type(name, (Net,), {})().forward

    return make


def _odd_method(name: str) -> Callable[[], Callable]:
    def make() -> Callable:
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return Net.forward(self, x)

        forward.__name__ = name
        model = Net()
        return forward.__get__(model)

    return make


ODD_NAMES = {
    "class ..": _odd_class(".."),
    "class a/b": _odd_class("a/b"),
    "class .": _odd_class("."),
    "method ..": _odd_method(".."),
    "method x/y": _odd_method("x/y"),
    "method ../../escape": _odd_method("../../escape"),
}


@pytest.mark.reliability(
    "Bad input: a class or method named `..`, `.`, or holding `/` (`a/b`, `../../escape`)",
    "the first call runs uncached with a warning naming the name; outputs = plain method; nothing written under "
    "the root or beside it",
)
@pytest.mark.parametrize("odd", ODD_NAMES)
def test_odd_names_run_uncached(tmp_path: Path, odd: str) -> None:
    """CC-8: a name that cannot be a folder is no ValueError at the first call: the call runs uncached."""
    root = tmp_path / "deep" / "cache"
    cached = cache_compile(ODD_NAMES[odd](), config=eager_config(), cache_dir=str(root))
    with pytest.warns(UserWarning, match="runs without its cache") as caught:
        out = cached(X)
    torch.testing.assert_close(out, Net().forward(X).detach(), rtol=0, atol=1e-6)
    assert any(repr(odd.split(" ", 1)[1]) in str(w.message) for w in caught), [str(w.message) for w in caught]
    assert cached.cache_file is None
    assert sorted(p.name for p in tmp_path.rglob("*")) == [], sorted(tmp_path.rglob("*"))


def _constants(entries: list) -> Callable[[dict], None]:
    def change(payload: dict) -> None:
        payload["bytecode"]["constants"] = entries

    return change


_ONE = {"marshal": base64.b64encode(marshal.dumps(1)).decode()}
BAD_CONSTANTS = {
    "index past the end": [{"at": [], "index": 10**6, "value": _ONE}],
    "negative index": [{"at": [], "index": -1, "value": _ONE}],
    "index a string": [{"at": [], "index": "0", "value": _ONE}],
    "path through a missing code object": [{"at": [10**6], "index": 0, "value": _ONE}],
    "path through a non-code constant": [{"at": [0], "index": 0, "value": _ONE}],
    "value of no known kind": [{"at": [], "index": 0, "value": {"what": 1}}],
    "entry not an object": [7],
    "index of a constant not set aside": [],  # the index of the first constant that is not None, found below
}


@pytest.mark.reliability(
    "Damaged file, resealed payload inconsistencies: a set-aside constant's index past the end, negative, a "
    "string, of a constant not set aside, a path through a missing or non-code constant, a value of no known kind",
    "readable_cache: BrokenCacheError (never an IndexError or KeyError); lazy path: rebuilt with a warning; "
    "outputs = plain method",
)
@pytest.mark.parametrize("bad", BAD_CONSTANTS)
def test_bad_constant_entries_are_broken_caches(tmp_path: Path, bad: str) -> None:
    """CC-17, RC-1: every inconsistency of a checksummed payload is a BrokenCacheError."""
    case = cold(tmp_path)
    entries = BAD_CONSTANTS[bad]
    if bad == "index of a constant not set aside":
        code = bytecode.decode(artifact.decode(case.valid)["bytecode"])
        entries = [{"at": [], "index": next(i for i, c in enumerate(code.co_consts) if c is not None), "value": _ONE}]
    case.path.write_bytes(reseal(case.valid, _constants(entries)))
    with pytest.raises(artifact.BrokenCacheError):
        readable_cache(str(case.path), print_output=False)
    out, warned, traced, _ = call_again(case)
    torch.testing.assert_close(out, Net().forward(X).detach(), rtol=0, atol=1e-6)
    assert traced == 1 and any("Discarding" in w for w in warned), warned


@pytest.mark.reliability(
    "Damaged file, resealed: the user input's entry in the record's graph inputs retyped from a tensor to a "
    "symbolic int (`kind: \"symint\"`, the tensor fields left in place)",
    "the input check finds a tensor where the record says an int: the call is traced afresh (never a tensor passed "
    "to the graph as an int); outputs = plain method, on the first call and on later ones",
)
def test_a_tensor_input_retyped_to_a_scalar_is_never_served(tmp_path: Path) -> None:
    """CC-15, CC-17 (issue 30): a graph input of a scalar kind is checked for its Python type on every call, in the
    full check and in the fast path, as a tensor input is for its dtype, device and rank."""
    case = cold(tmp_path)

    def retype(payload: dict) -> None:
        user = [entry for entry in payload["inputs"] if entry["role"] == "user_input" and entry["kind"] == "tensor"]
        assert len(user) == 1, payload["inputs"]
        user[0]["kind"] = "symint"

    case.path.write_bytes(reseal(case.valid, retype))
    before = counters["stats"]["unique_graphs"]
    cached = cache_compile(Net().forward, config=eager_config(), cache_dir=str(case.root))
    calls = [(torch.linspace(-2, 2, 12) * k).reshape(3, 4) for k in (1, 2, 3)]  # views, as X is (Dynamo guards it)
    with no_hang(), pytest.warns(UserWarning, match="expected a value of type int, got a Tensor"):
        outs = [cached(x) for x in calls]
    for x, out in zip(calls, outs):
        torch.testing.assert_close(out, Net().forward(x).detach(), rtol=0, atol=1e-6)
    assert counters["stats"]["unique_graphs"] - before == 1


# -- the .air inspector -------------------------------------------------------------------------------------------


def _model(*ops: Callable) -> bytes:
    model = ge_ir.ModelDef()
    model.name = "hostile"
    graph = model.graph.add()
    graph.name = "main"
    for make in ops:
        make(graph.op.add())
    return model.SerializeToString()


def _const(dims: list[int], data: bytes = b"") -> Callable:
    def make(op) -> None:
        op.name, op.type = "c", "Const"
        op.attr["value"].t.desc.dtype = ge_ir.DataType.Value("DT_FLOAT")
        op.attr["value"].t.desc.shape.dim.extend(dims)
        op.attr["value"].t.data = data

    return make


def _file_constant(dims: list[int] | None, path: str = "w") -> Callable:
    def make(op) -> None:
        op.name, op.type = "f", "FileConstant"
        if dims is not None:
            op.attr["shape"].list.i.extend(dims)
            op.attr["dtype"].dt = ge_ir.DataType.Value("DT_FLOAT")
            op.attr["file_path"].s = path.encode()

    return make


def _data(dims: list[int]) -> Callable:
    def make(op) -> None:
        op.name, op.type = "x", "Data"
        op.output_desc.add().shape.dim.extend(dims)

    return make


HOSTILE_AIR: dict[str, Callable[[Path], None]] = {
    "Const with 200k huge dims (1.8 MB)": lambda p: p.write_bytes(_model(_const([2**62] * 200_000))),
    "Const whose 64 dims multiply past 4300 digits": lambda p: p.write_bytes(_model(_const([2**62] * 64))),
    "Const whose 3 dims multiply past int64": lambda p: p.write_bytes(_model(_const([2**40] * 3))),
    "Const with a negative dim": lambda p: p.write_bytes(_model(_const([4, -3]))),
    "FileConstant with no attrs and no output description": lambda p: p.write_bytes(_model(_file_constant(None))),
    "FileConstant of 100k dims": lambda p: p.write_bytes(_model(_file_constant([1] * 100_000))),
    "Data with 200k dims": lambda p: p.write_bytes(_model(_data([1] * 200_000))),
    "a FIFO": lambda p: os.mkfifo(p),
    "a directory": lambda p: p.mkdir(),
}


@pytest.mark.reliability(
    "Export, hostile `.air` for the inspector: a Const with 200k huge dims, dims multiplying past 4300 digits or "
    "past int64, a negative weight dim, a FileConstant with no attrs, 100k-200k dims on a FileConstant or a Data "
    "op, a FIFO, a directory",
    "exit status 2 and an `error:` line naming the file or op and the reason, in well under a second; no "
    "traceback, no hang",
)
@pytest.mark.parametrize("hostile", HOSTILE_AIR)
def test_inspector_on_hostile_air(tmp_path: Path, hostile: str, capsys: pytest.CaptureFixture) -> None:
    """EX-7: every malformed file maps to exit status 2 with a message, in time linear in its size."""
    path = tmp_path / "hostile.air"
    HOSTILE_AIR[hostile](path)
    started = time.monotonic()
    with no_hang(20):
        status = air_inspect.main([str(path)])
    took = time.monotonic() - started
    err = capsys.readouterr().err
    assert status == 2 and err.startswith("error: "), (status, err)
    assert took < 10, f"{took:.1f} s for {hostile}"


@pytest.mark.reliability(
    "Export: a parameter named like an absolute path (`/tmp/.../evil`) or holding `/` (`sub/evil`), weights "
    "externalised",
    "a ValueError naming the parameter and the fix; nothing written outside `export_path` (nor in it)",
)
@pytest.mark.parametrize("name", ["absolute", "sub/evil"])
def test_weight_names_never_leave_the_rank_folder(tmp_path: Path, name: str) -> None:
    """EX-6: a weight file's name cannot hold a separator, so it cannot be written outside the rank's folder."""
    target = tmp_path / "evil"
    fqn = str(target) if name == "absolute" else name
    if "." in fqn:
        pytest.skip(f"{fqn} holds a '.', which torch refuses in a parameter name")
    model = nn.Module()
    model.register_parameter(fqn, nn.Parameter(torch.ones(2)))
    model.forward = lambda x: x * getattr(model, fqn)  # type: ignore[method-assign]
    before = snapshot(tmp_path)
    with externalize_threshold(0), pytest.raises(ValueError, match="rename the parameter"):
        dynamo_export(torch.randn(2), model=model, export_path=str(tmp_path / "out"))
    assert snapshot(tmp_path) == before, sorted(tmp_path.rglob("*"))



@pytest.mark.reliability(
    "Damaged folder: a FIFO or a plain file where a level of the cache should be (`<model_info>`, `<func>`, "
    "`kernels`)",
    "no hang: discarded with a warning (the entry removed) and rebuilt; outputs = plain method; one valid 0600 file",
)
@pytest.mark.parametrize("kind", ["FIFO", "file"])
@pytest.mark.parametrize("level", ["<model_info>", "<func>", "kernels"])
def test_non_directory_level_is_damage(tmp_path: Path, level: str, kind: str) -> None:
    """CC-17: a non-directory at any level below the root is damage, never waited on."""
    case = cold(tmp_path)
    folder = {"<model_info>": case.path.parents[1], "<func>": case.path.parent,
              "kernels": case.path.parent / "kernels"}[level]
    if folder.exists():
        shutil.rmtree(folder)
    if kind == "FIFO":
        os.mkfifo(folder, 0o600)
    else:
        folder.write_bytes(b"not a folder")
    out, warned, traced, _ = call_again(case)
    torch.testing.assert_close(out, Net().forward(X).detach(), rtol=0, atol=1e-6)
    assert traced == 1 and any("Discarding" in w and f"{folder} is not a directory" in w for w in warned), warned
    assert_one_valid_cache(case.root)
