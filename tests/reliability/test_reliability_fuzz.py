"""CC-17, RC-1, EX-7: structure-aware fuzzers of the cache file and of ``.air`` files.

The inputs keep a valid framing (the magic line, a JSON header, a JSON payload, resealed with a matching length and
SHA-256 unless the example says otherwise; a ``ModelDef`` protobuf) and put hostile values inside: huge, negative,
non-integer or wrongly typed lengths and versions, any JSON in place of any part of a real payload, shapes with
huge, negative or very many dims, missing attributes, odd dtypes and file paths. Each example must end within its
time bound (an alarm: a hang fails the test; 20 s, or 120 s for a lazy-path example, which compiles) with a result
or the documented error: `readable_cache` returns text or raises `BrokenCacheError` (`StaleCacheError` for another
format version); the lazy path returns the plain method's outputs; the inspector exits 0, 1 or 2 (2 with an
``error:`` line). Any other exception is a failure. Each test prints the examples it ran and the longest time one took.
"""
from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import json
import os
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ge_executor import ge_ir
from tests.reliability.faults import Net, X, budget, cold, eager_config, no_hang
from torchair_ref.errors import CacheFileError
from torchair_ref.export import inspect as air_inspect
from torchair_ref.inference import artifact, cache_compile, readable_cache

#: seconds one example may take before it counts as a hang (a lazy-path example compiles: more on a loaded host)
TIME_BOUND = 20
COMPILE_TIME_BOUND = 120
def fuzz(examples: int) -> settings:
    """The settings of a fuzzer: `examples` examples, no deadline (the time bound is `TIME_BOUND`), no database."""
    return settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))


class Timer:
    """Counts examples and the longest one; each runs under `no_hang(bound)`."""

    def __init__(self, bound: int = TIME_BOUND) -> None:
        self.bound = bound
        self.examples = 0
        self.longest = 0.0
        self.outcomes: dict[str, int] = {}

    @contextlib.contextmanager
    def example(self):
        started = time.monotonic()
        with no_hang(self.bound):
            yield
        self.examples += 1
        self.longest = max(self.longest, time.monotonic() - started)

    def report(self, name: str, record_property: Callable) -> None:
        record_property("cases", self.examples)
        record_property("longest_example_s", round(self.longest, 3))
        print(f"\nFUZZ {name}: {self.examples} examples ({self.outcomes}), longest {self.longest:.3f} s, 0 hangs, "
              "0 tracebacks")

    def outcome(self, what: str) -> None:
        self.outcomes[what] = self.outcomes.get(what, 0) + 1


# -- the cache file -------------------------------------------------------------------------------------------------

JSON_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**80), 2**80), st.floats(allow_nan=False), st.text(max_size=30),
    st.sampled_from([0, -1, 2**63, 10**4300 // 10**4200, "", "1", "\x00", "../../x", "/etc/passwd"]),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _paths(value: Any, at: tuple = ()) -> list[tuple]:
    """Every key path into a JSON value (containers included)."""
    found = [at]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, at + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value[:4]):
            found += _paths(item, at + (i,))
    return found


def _replace(value: Any, at: tuple, new: Any) -> Any:
    if not at:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[at[0]] = _replace(copy[at[0]], at[1:], new)
    return copy


@st.composite
def hostile_cache(draw: st.DrawFn, valid_payload: dict) -> bytes:
    """A cache file: the magic line, a header and a payload, with hostile values in the header or the payload."""
    payload = valid_payload
    for _ in range(draw(st.integers(0, 3), label="payload edits")):
        at = draw(st.sampled_from(_paths(payload)), label="payload path")
        new = draw(st.one_of(JSON_VALUES, st.binary(max_size=64).map(lambda b: base64.b64encode(b).decode())),
                   label="new value")
        payload = _replace(payload, at, new)
    body = json.dumps(payload, sort_keys=True).encode()
    header: dict[str, Any] = {"format": artifact.FORMAT_VERSION, "payload_bytes": len(body),
                              "payload_sha256": hashlib.sha256(body).hexdigest()}
    hostile_fields = st.sets(st.sampled_from(sorted(header)), max_size=3) if draw(st.booleans()) else st.just(set())
    for key in draw(hostile_fields, label="hostile header fields"):
        header[key] = draw(JSON_VALUES, label=f"header {key}")
    raw_header = json.dumps(header).encode()
    if draw(st.integers(0, 5), label="header replaced by any JSON") == 0:
        raw_header = json.dumps(draw(JSON_VALUES)).encode()
    if draw(st.integers(0, 5), label="deeply nested header") == 0:
        raw_header = b"[" * draw(st.integers(1, 4000)) + b"]"
    return artifact.MAGIC + raw_header + b"\n" + body


@pytest.fixture(scope="module")
def valid_cache(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return cold(tmp_path_factory.mktemp("valid")).valid


@pytest.mark.reliability(
    "Hostile file, fuzzed for readable_cache: valid framing (magic, JSON header, JSON payload) with hostile header "
    "values (lengths, versions, digests of any JSON type, deeply nested) and any JSON anywhere in a real payload, "
    "mostly resealed",
    "each example returns text or raises BrokenCacheError or StaleCacheError within 20 s; no other exception, no hang",
)
def test_fuzz_cache_file_readable(tmp_path: Path, valid_cache: bytes, record_property: Callable) -> None:
    """RC-1, CC-17: readable_cache on structure-aware hostile cache files."""
    timer = Timer()
    path = tmp_path / "compiled_module"

    @fuzz(budget("cheap") * 4)
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        path.write_bytes(data.draw(hostile_cache(artifact.decode(valid_cache)), label="cache file"))
        path.chmod(0o600)
        with timer.example():
            try:
                text = readable_cache(str(path), print_output=False)
            except CacheFileError:  # broken, or stale for another format version
                timer.outcome("refused")
                return
        assert isinstance(text, str)
        timer.outcome("rendered")

    check()
    timer.report("cache file (readable_cache)", record_property)


@pytest.mark.reliability(
    "Hostile file, fuzzed for the lazy path: the same structure-aware hostile cache files at a real cache path",
    "each example's first call returns the plain method's outputs (loaded or rebuilt with a warning) within 120 s "
    "(it compiles); no exception, no hang",
)
def test_fuzz_cache_file_lazy(tmp_path: Path, valid_cache: bytes, record_property: Callable) -> None:
    """CC-14, CC-17: the lazy path on structure-aware hostile cache files."""
    timer = Timer(COMPILE_TIME_BOUND)
    expected = Net().forward(X).detach()
    first = cold(tmp_path / "layout")
    relative = first.path.relative_to(first.root)

    @fuzz(budget("compile"))
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        root = Path(tempfile.mkdtemp(dir=tmp_path))
        path = root / relative
        path.parent.mkdir(parents=True, mode=0o700)
        path.write_bytes(data.draw(hostile_cache(artifact.decode(valid_cache)), label="cache file"))
        path.chmod(0o600)
        with timer.example(), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = cache_compile(Net().forward, config=eager_config(), cache_dir=str(root))(X)
        torch.testing.assert_close(out, expected, rtol=0, atol=1e-6)
        timer.outcome("rebuilt" if any("Discarding" in str(w.message) for w in caught) else "loaded")

    check()
    timer.report("cache file (lazy path)", record_property)


# -- .air files -----------------------------------------------------------------------------------------------------

DIMS = st.one_of(
    st.lists(st.integers(-(2**63), 2**63 - 1), max_size=12),
    st.lists(st.integers(0, 8), max_size=6),
    st.tuples(st.integers(0, 200_000), st.integers(-(2**63), 2**63 - 1)).map(lambda cv: [cv[1]] * cv[0]),
)
DTYPES = st.one_of(st.sampled_from(list(ge_ir.DataType.values())), st.integers(-(2**31), 2**31 - 1))
TEXT = st.text(max_size=20)


@st.composite
def hostile_op(draw: st.DrawFn, op: Any, folder: Path) -> None:
    op.name = draw(TEXT, label="name")
    op.type = draw(st.sampled_from(["Data", "Const", "FileConstant", "Add", ""]) | TEXT, label="type")
    for _ in range(draw(st.integers(0, 2), label="output descs")):
        desc = op.output_desc.add()
        desc.dtype = draw(DTYPES)
        desc.shape.dim.extend(draw(DIMS, label="output dims"))
    if draw(st.booleans(), label="value attr"):
        tensor = op.attr["value"].t
        tensor.desc.dtype = draw(DTYPES)
        tensor.desc.shape.dim.extend(draw(DIMS, label="value dims"))
        tensor.data = draw(st.binary(max_size=64))
    if draw(st.booleans(), label="shape attr"):
        op.attr["shape"].list.i.extend(draw(DIMS, label="shape attr dims"))
    if draw(st.booleans(), label="dtype attr"):
        op.attr["dtype"].dt = draw(DTYPES)
    if draw(st.booleans(), label="file_path attr"):
        choice = draw(st.sampled_from(["fifo", "weights", "missing", "dir", "text"]))
        path = {"fifo": str(folder / "fifo"), "weights": str(folder / "weights"), "missing": "/no/such/file",
                "dir": str(folder), "text": draw(TEXT)}[choice]
        op.attr["file_path"].s = path.encode("utf-8", "surrogatepass")
    if draw(st.booleans(), label="index attr"):
        op.attr["index"].i = draw(st.integers(-(2**63), 2**63 - 1))


@st.composite
def hostile_air(draw: st.DrawFn, folder: Path) -> bytes:
    model = ge_ir.ModelDef()
    model.name = draw(TEXT)
    for _ in range(draw(st.integers(0, 2), label="graphs")):
        graph = model.graph.add()
        for _ in range(draw(st.integers(0, 4), label="ops")):
            draw(hostile_op(graph.op.add(), folder))
    data = model.SerializeToString()
    if draw(st.integers(0, 4), label="cut") == 0 and data:
        data = data[: draw(st.integers(0, len(data) - 1), label="cut at")]
    return data


@pytest.mark.reliability(
    "Export, hostile `.air` fuzzed for the inspector: ModelDefs of 0-2 graphs and 0-4 ops of any type, with huge, "
    "negative or up to 200k dims, any dtype number, missing attrs, file paths to a FIFO, a folder, nothing or any "
    "text, sometimes cut short",
    "each example exits 0, 1 or 2 (2 with an `error:` line) within 20 s; no traceback, no hang",
)
def test_fuzz_air_inspector(tmp_path: Path, record_property: Callable) -> None:
    """EX-7: the inspector on structure-aware hostile .air files."""
    timer = Timer()
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "weights").write_bytes(b"\0" * 64)
    air = tmp_path / "hostile.air"

    @fuzz(budget("cheap") * 4)
    @given(data=st.data(), as_json=st.booleans())
    def check(data: st.DataObject, as_json: bool) -> None:
        air.write_bytes(data.draw(hostile_air(tmp_path), label=".air"))
        out, err = io.StringIO(), io.StringIO()
        with timer.example(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = air_inspect.main([str(air), *(["--json"] if as_json else [])])
        assert status in (0, 1, 2), status
        assert status != 2 or err.getvalue().startswith("error: "), err.getvalue()
        timer.outcome(f"exit {status}")

    check()
    timer.report(".air (inspector)", record_property)
