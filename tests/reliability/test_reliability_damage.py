"""CC-17, RC-1: damaged, foreign, stale and unsafe cache files, on the lazy path and in readable_cache.

Each damage is applied to a valid cache of `tests.reliability.faults.Net.forward` (eager compiler, in this process).
The lazy
path must rebuild with a warning, give the plain method's outputs, leave one valid 0600 file at the real path and
touch nothing outside the cache root; readable_cache must raise (a ValueError) and change nothing.
"""
from __future__ import annotations

import json
import os
import pickle
import shutil
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch._dynamo.utils import counters

from tests.reliability.faults import (
    Case,
    Net,
    Trap,
    X,
    assert_one_valid_cache,
    budget,
    call_again,
    cold,
    eager_config,
    listing,
    no_hang,
    reseal,
    snapshot,
)
from torchair_ref.inference import artifact, cache_compile, readable_cache


def _layout(case: Case) -> tuple[int, int]:
    """(end of the magic line, end of the header line)."""
    return len(artifact.MAGIC), case.valid.index(b"\n", len(artifact.MAGIC)) + 1


def _write(case: Case, data: bytes) -> None:
    case.path.write_bytes(data)
    case.path.chmod(0o600)


def _truncate(where: str) -> Callable[[Case], None]:
    def damage(case: Case) -> None:
        magic, header = _layout(case)
        cut = {"in the magic": magic // 2, "after the magic": magic, "in the header": (magic + header) // 2,
               "after the header": header, "in the payload": (header + len(case.valid)) // 2,
               "before the last byte": len(case.valid) - 1}[where]
        _write(case, case.valid[:cut])

    return damage


def _symlink_file_to_valid_copy(case: Case) -> None:
    copy = case.outside / "compiled_module"
    shutil.copy2(case.path, copy)
    case.path.unlink()
    case.path.symlink_to(copy)


def _symlink_level(level: int) -> Callable[[Case], None]:
    """Replace the folder `level` steps above compiled_module by a symlink to a copy of it outside the root."""

    def damage(case: Case) -> None:
        folder = case.path.parents[level]
        copy = case.outside / folder.name
        shutil.copytree(folder, copy, symlinks=True)
        shutil.rmtree(folder)
        folder.symlink_to(copy)

    return damage


def _fifo(case: Case) -> None:
    case.path.unlink()
    os.mkfifo(case.path, 0o600)


def _directory(case: Case) -> None:
    case.path.unlink()
    case.path.mkdir()


def _other_owner(case: Case) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to give the cache file to another user")
    os.chown(case.path, 4242, 4242)


#: damage name -> what it does; every one must be rebuilt on the lazy path and refused by readable_cache
DAMAGES: dict[str, Callable[[Case], None]] = {
    "zero length": lambda case: _write(case, b""),
    **{f"truncated {where}": _truncate(where) for where in (
        "in the magic", "after the magic", "in the header", "after the header", "in the payload",
        "before the last byte")},
    "another implementation's file (torch.save)": lambda case: (torch.save({"w": torch.ones(2)}, case.path),
                                                               case.path.chmod(0o600)),
    "older format version (0)": lambda case: _write(case, case.valid.replace(b'"format": 1', b'"format": 0', 1)),
    "newer format version (2)": lambda case: _write(case, case.valid.replace(b'"format": 1', b'"format": 2', 1)),
    "payload without its graph": lambda case: _write(case, reseal(case.valid, lambda p: p.pop("graph"))),
    "mode 0644": lambda case: case.path.chmod(0o644),
    "mode 0640": lambda case: case.path.chmod(0o640),
    "mode 0400": lambda case: case.path.chmod(0o400),
    "mode 0700": lambda case: case.path.chmod(0o700),
    "owner: another uid": _other_owner,
    "a directory named compiled_module": _directory,
    "a FIFO named compiled_module": _fifo,
    "compiled_module: a dangling symlink": lambda case: (case.path.unlink(), case.path.symlink_to(case.outside / "x")),
    "compiled_module: a symlink to a valid cache outside the root": _symlink_file_to_valid_copy,
}
#: valid files written under another environment or for another version of the method: stale on the lazy path,
#: still readable (readable_cache shows the recorded environment, which says why)
STALE: dict[str, Callable[[Case], None]] = {
    "another torch version": lambda case: _write(case, reseal(
        case.valid, lambda p: p["environment"].update(torch="1.0.0"))),
    "another Python": lambda case: _write(case, reseal(
        case.valid, lambda p: p["environment"].update(python="3.0.0", bytecode_magic="0000"))),
    "another CPU capability": lambda case: _write(case, reseal(
        case.valid, lambda p: p["environment"].update(cpu_capability="NO AVX"))),
    "edited method (code digest)": lambda case: _write(case, reseal(
        case.valid, lambda p: p["function"].update(code_digest="0" * 64))),
    "a guard source no check can read (resealed, its stored check kept)": lambda case: _write(case, reseal(
        case.valid, _unreadable_guard_source)),
    "a module tensor's guard source no check can read (resealed)": lambda case: _write(case, reseal(
        case.valid, lambda p: _damaged_tensor_guard(p, source=".__class__("))),
    "a tensor guard's size that no tensor has (resealed)": lambda case: _write(case, reseal(
        case.valid, lambda p: _damaged_tensor_guard(p, size=["eight"]))),
    "GLOBAL_STATE without a field torch writes (resealed)": lambda case: _write(case, reseal(
        case.valid, lambda p: _edited_global_state(p, lambda fields: fields.pop(next(iter(fields)))))),
    "GLOBAL_STATE with a text for a flag (resealed)": lambda case: _write(case, reseal(
        case.valid, lambda p: _edited_global_state(p, _flag_as_text))),
}
def _unreadable_guard_source(payload: dict) -> None:
    """A record whose stored check has an outline is read without validating its guards (they were validated when
    it was written); one of them damaged after that changes the outline, so the warm start writes the check, and
    reading that source refuses it. (Its replay table, which rebuilds the check's constants without reading the
    specs, is removed here: `test_an_edit_the_replay_does_not_read_never_misleads` has the file with it.)"""
    assert "outline" in payload["guard_code"], payload["guard_code"]
    del payload["guard_code"]["replay"]
    spec = next(spec for spec in payload["guards"] if isinstance(spec.get("source"), str))
    spec["source"] = spec["source"] + ".__class__("


def _damaged_tensor_guard(payload: dict, source: str = "", size: list | None = None, keep: bool = False) -> None:
    """The first tensor guard of a module's parameter (checked where the file loads, not by the per-call check whose
    outline the record holds) given an unreadable source or a size no tensor has: the record is broken, not a
    variant that does not fit this process. (The load-time check's replay table, which rebuilds each tensor's layout
    without reading the specs, is removed here but with `keep`: `test_a_load_time_edit_the_replay_does_not_read_...`
    has the file with it.)"""
    if not keep:
        del payload["guard_code"]["first"]["replay"]
    spec = next(spec for spec in payload["guards"] if spec["check"] == "tensor" and spec["when"] == "first")
    spec["source"] += source
    if size is not None:
        spec["size"] = size


def _edited_global_state(payload: dict, edit: Callable[[dict], object]) -> None:
    """GLOBAL_STATE's recorded fields edited: torch's C++ reader aborts the whole process on a field it lacks or of
    another kind, so the warm start checks their form before handing them over."""
    spec = next(spec for spec in payload["guards"] if spec["check"] == "global_state")
    fields = json.loads(spec["state"])
    edit(fields)
    spec["state"] = json.dumps(fields)


def _flag_as_text(fields: dict) -> None:
    """A flag (but grad mode, which the warm check sets itself) given a text."""
    name = next(name for name, value in fields.items() if isinstance(value, bool) and name != "grad_mode")
    fields[name] = "yes"


#: folders above compiled_module replaced by symlinks: the lazy path never follows them (readable_cache does: the
#: caller named that path, and only a symlinked file is refused by RC-1)
LEVELS: dict[str, Callable[[Case], None]] = {
    "<func> folder: a symlink to a valid copy outside the root": _symlink_level(0),
    "<model_info> folder: a symlink to a valid copy outside the root": _symlink_level(1),
}


@pytest.mark.reliability(
    "Damaged file, lazy path: zero length, truncated at 6 offsets, another implementation's, older/newer format, "
    "other torch, Python or CPU, edited method, resealed without its graph or with a guard source no check reads "
    "(per call or at load), a tensor size or a GLOBAL_STATE torch's reader would abort on, 4 wrong modes, other "
    "owner, directory, FIFO, symlinked file or parent folder",
    "rebuilt with a `Discarding ... cache` warning; outputs = plain method; one valid 0600 file at the real path; "
    "nothing outside the root touched; no hang",
)
@pytest.mark.parametrize("damage", [*DAMAGES, *STALE, *LEVELS])
def test_damaged_cache_is_rebuilt_with_a_warning(tmp_path: Path, damage: str) -> None:
    """CC-17: a damaged or unsafe cache is discarded with a warning and compiled afresh, never trusted or followed."""
    case = cold(tmp_path)
    {**DAMAGES, **STALE, **LEVELS}[damage](case)
    outside = snapshot(case.outside)
    out, warned, traced, cache_file = call_again(case)
    torch.testing.assert_close(out, Net().forward(X).detach(), rtol=0, atol=1e-6)
    assert any("Discarding" in w for w in warned), f"{damage}: no Discarding warning in {warned}"
    assert traced == 1, f"{damage}: traced {traced} graphs, expected a fresh compile"
    assert cache_file == str(case.path), f"{damage}: the cache path became {cache_file}, expected {case.path}"
    assert_one_valid_cache(case.root)
    assert not [p for p, kind in listing(case.root).items() if kind.startswith("link")], listing(case.root)
    assert snapshot(case.outside) == outside, f"{damage}: something outside the cache root changed"


@pytest.mark.reliability(
    "Damaged file, readable_cache: the same damages but the stale ones and the parent folders (the caller names "
    "that path; RC-1 refuses a symlinked file)",
    "a ValueError (`BrokenCacheError` or RC-1's symlink error) naming the file and the reason; nothing deleted or "
    "changed; no hang",
)
@pytest.mark.parametrize("damage", list(DAMAGES))
def test_damaged_cache_is_a_clear_readable_error(tmp_path: Path, damage: str, capsys: pytest.CaptureFixture) -> None:
    """RC-1: readable_cache on a damaged cache raises a ValueError naming the file, and deletes or changes nothing."""
    case = cold(tmp_path)
    DAMAGES[damage](case)
    before = snapshot(tmp_path)
    with pytest.raises(ValueError) as caught, no_hang():
        readable_cache(str(case.path))
    assert str(case.path) in str(caught.value) or "cache file" in str(caught.value), repr(caught.value)
    assert snapshot(tmp_path) == before, f"{damage}: readable_cache changed files"
    assert capsys.readouterr().out == "", "readable_cache printed before failing"


@pytest.mark.reliability(
    "Stale file, readable_cache: another torch, Python or CPU, an edited method, or resealed with a guard no check "
    "reads or a GLOBAL_STATE torch's reader would abort on",
    "read (it is a valid file): the text shows the recorded environment; nothing changed",
)
@pytest.mark.parametrize("damage", list(STALE))
def test_stale_cache_is_still_readable(tmp_path: Path, damage: str) -> None:
    """RC-1, RC-2: a valid cache from another environment is readable; its text shows the environment it records."""
    case = cold(tmp_path)
    STALE[damage](case)
    before = snapshot(tmp_path)
    text = readable_cache(str(case.path), print_output=False)
    recorded = artifact.read(str(case.path))["environment"]
    assert "environment: " + ", ".join(f"{k}={v}" for k, v in sorted(recorded.items())) in text, text[:800]
    assert snapshot(tmp_path) == before, f"{damage}: readable_cache changed files"


@pytest.mark.reliability(
    "Damaged file: random bit flips (1 to 8 bits anywhere in the file)",
    "each flipped file is refused and compiled afresh; outputs = plain method; one valid 0600 file after",
)
def test_random_bit_flips_are_rebuilt(tmp_path: Path, record_property: Callable) -> None:
    """CC-17: any bit flips are caught (magic, header or SHA-256) and the cache rebuilt; outputs stay right."""
    tried = []

    @settings(max_examples=budget("compile"), deadline=None, database=None)
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        base = tmp_path / f"example{len(tried)}"
        base.mkdir()
        case = cold(base)
        flips = data.draw(st.lists(st.tuples(st.integers(0, len(case.valid) - 1), st.integers(0, 7)),
                                   min_size=1, max_size=8, unique=True), label="flips (offset, bit)")
        tried.append(flips)
        damaged = bytearray(case.valid)
        for offset, bit in flips:
            damaged[offset] ^= 1 << bit
        _write(case, bytes(damaged))
        before = counters["stats"]["unique_graphs"]
        out = cache_compile(Net().forward, config=eager_config(), cache_dir=str(case.root))(X)
        traced = counters["stats"]["unique_graphs"] - before
        torch.testing.assert_close(out, Net().forward(X).detach(), rtol=0, atol=1e-6)
        if bytes(damaged) != case.valid:
            assert traced == 1, f"flips {flips} were loaded instead of rebuilt"
        assert_one_valid_cache(case.root)

    check()
    record_property("cases", len(tried))


@pytest.mark.reliability(
    "Hostile file: a pickle whose `__reduce__` writes a canary",
    "lazy path: rebuilt with a warning; readable_cache: ValueError; the canary never appears",
)
@pytest.mark.parametrize("api", ["lazy path", "readable_cache"])
def test_pickle_with_reduce_never_runs(tmp_path: Path, api: str) -> None:
    """CC-17, RC-1: a cache crafted as a pickle that runs code when unpickled is never unpickled."""
    case = cold(tmp_path)
    canary = tmp_path / "canary"
    _write(case, pickle.dumps(Trap(str(canary))))
    if api == "lazy path":
        out, warned, traced, _ = call_again(case)
        torch.testing.assert_close(out, Net().forward(X).detach(), rtol=0, atol=1e-6)
        assert traced == 1 and any("Discarding" in w for w in warned), (traced, warned)
    else:
        with pytest.raises(ValueError, match="not a torchair_ref cache"):
            readable_cache(str(case.path), print_output=False)
    assert not canary.exists(), "the pickle's code ran"


@pytest.mark.parametrize("first", [False, True], ids=["a later call rejected", "the first call rejected"])
@pytest.mark.parametrize("field,edited", [("source", "L['self']._modules['fc1']._forward_hooks.__class__("),
                                          ("length", "zero")])
def test_an_edit_the_replay_does_not_read_never_misleads(tmp_path: Path, field: str, edited: str,
                                                         first: bool) -> None:
    """CC-14/CC-17: the per-call specs whose constants a stored check's replay table rebuilds are read only where a
    check fails (the seal covers specs, check and table together). One edited after the file was written and
    resealed (a source no check can read, a length that is no number): the warm start runs the cold process's
    stored check, so a call it accepts is served right without a trace; a call that check rejects (a hook added),
    the first or a later one, meets the edited spec where the failing check is named, and is traced afresh, with
    the hook, instead of raising."""
    case = cold(tmp_path)

    def edit(payload: dict) -> None:
        call = payload["guard_code"]["replay"]["call"]
        spec = next(spec for index, spec in enumerate(payload["guards"])
                    if index in call and spec["check"] == "length" and "fc1']._forward_hooks" in spec["source"])
        spec[field] = edited

    _write(case, reseal(case.valid, edit))
    net, before = Net(), counters["stats"]["unique_graphs"]
    cached = cache_compile(net.forward, config=eager_config(), cache_dir=str(case.root))
    if not first:
        with no_hang():
            out = cached(X)
        torch.testing.assert_close(out, Net().forward(X).detach(), rtol=0, atol=1e-6)
        assert counters["stats"]["unique_graphs"] == before, "the warm start traced"
    net.fc1.register_forward_hook(lambda module, args, output: output * 2)
    with no_hang(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = cached(X)
    torch.testing.assert_close(out, net(X).detach(), rtol=0, atol=1e-6)
    assert counters["stats"]["unique_graphs"] == before + 1, "the hooked call was not traced afresh"
    said = " ".join(str(w.message) for w in caught)  # the reason names the edited record, not a state change
    assert "a guard the record holds is not valid" in said and "edited after it was written" in said, said


@pytest.mark.parametrize("field", ["source", "size"])
def test_a_load_time_edit_the_replay_does_not_read_never_misleads(tmp_path: Path, field: str) -> None:
    """CC-14/CC-17: the module tensors' specs whose layouts the load-time check's replay table rebuilds are read only
    where that check fails (the seal covers specs, check and table together). One edited after the file was written
    and resealed (a source no check can read, a size that is no number): a module that fits the cold process's check
    warm-starts from it without a trace and computes right; one that does not (a parameter laid out otherwise) meets
    the edited spec where the failure is named, and the file is rebuilt with a warning instead of raising."""
    case = cold(tmp_path)
    edit = {"source": {"source": ".__class__("}, "size": {"size": ["eight"]}}[field]
    _write(case, reseal(case.valid, lambda p: _damaged_tensor_guard(p, keep=True, **edit)))
    before = counters["stats"]["unique_graphs"]
    with no_hang():
        out = cache_compile(Net().forward, config=eager_config(), cache_dir=str(case.root))(X)
    torch.testing.assert_close(out, Net().forward(X).detach(), rtol=0, atol=1e-6)
    assert counters["stats"]["unique_graphs"] == before, "the warm start traced"
    net = Net()
    net.fc1.weight = torch.nn.Parameter(net.fc1.weight.detach().t().contiguous().t())  # the same values, strided
    cached = cache_compile(net.forward, config=eager_config(), cache_dir=str(case.root))
    with no_hang(), pytest.warns(UserWarning) as caught:
        out = cached(X)
    torch.testing.assert_close(out, net(X).detach(), rtol=0, atol=1e-6)
    assert counters["stats"]["unique_graphs"] == before + 1, "the misfit module was not compiled afresh"
    said = " ".join(str(w.message) for w in caught)
    assert "Discarding" in said and "guards are not valid" in said, said
