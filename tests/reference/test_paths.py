"""Tests of torchair_ref.inference.paths: the pure cache path formula (CC-8, CC-9, CC-10)."""

from __future__ import annotations

import hashlib
import inspect
import os
import pathlib
import re
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import torchair_ref
from torchair_ref.config import CompilerConfig, options_string
from torchair_ref.inference.paths import (
    cache_file,
    cache_tags,
    dist_level,
    model_info,
    npu_deterministic_level,
    resolve_root,
)

SUFFIX0 = "|npu_deterministic_level=0"
MD5_OF_EMPTY_AT_LEVEL_0 = hashlib.md5(SUFFIX0.encode()).hexdigest()
ENV = "TORCHAIR_CACHE_HOME"

names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,15}", fullmatch=True)
segments = st.from_regex(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,7}", fullmatch=True).filter(lambda s: s not in (".", ".."))
absolute_dirs = st.lists(segments, max_size=4).map(lambda parts: "/" + "/".join(parts))
relative_dirs = st.lists(segments, min_size=1, max_size=4).map("/".join)
ranks = st.integers(min_value=0, max_value=4096)
optional_ranks = st.none() | ranks


def join_under(cwd: str, relative: str) -> str:
    return cwd.rstrip("/") + "/" + relative


@pytest.mark.parametrize(
    ("cache_dir", "env", "cwd", "expected"),
    [
        (None, {}, "/work", "/work/.torchair_cache"),
        ("", {}, "/work", "/work/.torchair_cache"),
        (None, {ENV: ""}, "/work", "/work/.torchair_cache"),
        (None, {ENV: "/home/u/cache"}, "/work", "/home/u/cache"),
        (None, {ENV: "rel/cache"}, "/work", "/work/rel/cache"),
        ("/abs/dir", {ENV: "/home/u/cache"}, "/work", "/abs/dir"),
        ("cache", {ENV: "/home/u/cache"}, "/work", "/work/cache"),
        ("./a/../b/", {}, "/work", "/work/b"),
        ("../up", {}, "/work/sub", "/work/up"),
        (pathlib.Path("p/q"), {}, "/work", "/work/p/q"),
        (pathlib.PurePosixPath("/x//y/"), {}, "/work", "/x/y"),
        (None, {}, "/", "/.torchair_cache"),
    ],
)
def test_resolve_root_cases(cache_dir: object, env: dict[str, str], cwd: str, expected: str) -> None:
    """CC-8: root = truthy cache_dir, else non-empty $TORCHAIR_CACHE_HOME, else <cwd>/.torchair_cache; absolute."""
    found = resolve_root(cache_dir, env=env, cwd=cwd)
    call = f"resolve_root({cache_dir!r}, env={env!r}, cwd={cwd!r})"
    assert found == expected, f"{call}: expected {expected!r}, found {found!r}"


def test_resolve_root_reads_neither_process_cwd_nor_environ(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """CC-7, CC-8: the root depends only on the arguments, not on os.environ or the process cwd."""
    monkeypatch.setenv(ENV, str(tmp_path / "from_environ"))
    monkeypatch.chdir(tmp_path)
    found = resolve_root(None, env={}, cwd="/elsewhere")
    assert found == "/elsewhere/.torchair_cache", f"found {found!r}"


@given(cwd=absolute_dirs, relative=relative_dirs, env_value=st.none() | absolute_dirs)
def test_relative_root_is_joined_to_cwd(cwd: str, relative: str, env_value: str | None) -> None:
    """CC-8: a relative cache_dir or $TORCHAIR_CACHE_HOME is taken against the given cwd."""
    as_cache_dir = resolve_root(relative, env={ENV: env_value} if env_value else {}, cwd=cwd)
    as_env = resolve_root(None, env={ENV: relative}, cwd=cwd)
    expected = join_under(cwd, relative)
    assert as_cache_dir == expected == as_env, f"cwd={cwd!r} relative={relative!r}: {as_cache_dir!r}, {as_env!r}"


@given(
    cache_dir=st.none() | st.just("") | absolute_dirs | relative_dirs,
    env_value=st.none() | st.just("") | absolute_dirs | relative_dirs,
    cwd=absolute_dirs,
)
def test_env_var_used_only_when_cache_dir_is_falsy(cache_dir: str | None, env_value: str | None, cwd: str) -> None:
    """CC-8: $TORCHAIR_CACHE_HOME decides the root only when cache_dir is falsy, and only when non-empty."""
    env = {} if env_value is None else {ENV: env_value}
    found = resolve_root(cache_dir, env=env, cwd=cwd)
    chosen = cache_dir or env_value or ".torchair_cache"
    expected = os.path.normpath(chosen if chosen.startswith("/") else join_under(cwd, chosen))
    assert found == expected, f"cache_dir={cache_dir!r} env={env!r} cwd={cwd!r}: expected {expected!r}, found {found!r}"
    assert os.path.isabs(found), f"root {found!r} is not absolute"


@pytest.mark.parametrize(
    ("cache_dir", "cwd", "error"),
    [("x", "relative/cwd", ValueError), (b"/bytes", "/work", TypeError), (3, "/work", TypeError)],
)
def test_resolve_root_rejects_bad_arguments(cache_dir: object, cwd: str, error: type[Exception]) -> None:
    """CC-8: a relative cwd or a non-path cache_dir is rejected with a message naming the value."""
    with pytest.raises(error) as caught:
        resolve_root(cache_dir, env={}, cwd=cwd)
    bad = cwd if error is ValueError else cache_dir
    assert repr(bad) in str(caught.value), f"{bad!r} not named in {str(caught.value)!r}"


@pytest.mark.parametrize(
    ("mode", "ge_cache", "expected"),
    [
        ("max-autotune", False, []),
        ("max-autotune", True, ["gecache"]),
        ("reduce-overhead", False, ["aclgraphcache"]),
        ("reduce-overhead", True, ["aclgraphcache"]),
    ],
)
def test_cache_tags(mode: str, ge_cache: bool, expected: list[str]) -> None:
    """CC-9, CC-5: aclgraphcache iff reduce-overhead; gecache iff max-autotune with ge_cache."""
    found = cache_tags(mode, ge_cache)
    assert found == expected, f"cache_tags({mode!r}, {ge_cache!r}): expected {expected!r}, found {found!r}"


def test_cache_tags_rejects_unknown_mode() -> None:
    """CC-9: a mode outside the known ones is an error naming it, not a silent empty tag list."""
    with pytest.raises(ValueError, match="'max_autotune'.*max-autotune"):
        cache_tags("max_autotune", True)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("Model", "", "", False, []), f"Model_static_{MD5_OF_EMPTY_AT_LEVEL_0}"),
        (("Model", "", "", True, ["gecache"]), f"Model_dynamic_gecache_{MD5_OF_EMPTY_AT_LEVEL_0}"),
        (("M", "a", "bc", True, ["aclgraphcache"]),
         f"M_dynamic_aclgraphcache_{hashlib.md5(('abc' + SUFFIX0).encode()).hexdigest()}"),
    ],
)
def test_model_info_layout(args: tuple, expected: str) -> None:
    """CC-8: model_info is ClassName_dynamic|static[_tags]_md5(module_repr + options + "|npu_deterministic_level=L")."""
    found = model_info(*args, deterministic_level=0)
    assert found == expected, f"model_info{args!r}: expected {expected!r}, found {found!r}"


@given(level=st.integers(min_value=0, max_value=3), other=st.integers(min_value=0, max_value=3))
def test_deterministic_level_is_part_of_the_digest(level: int, other: int) -> None:
    """CC-8: the md5 covers the ``|npu_deterministic_level=L`` suffix, so another level is another path."""
    found = model_info("M", "M()", "mode=max-autotune", True, [], deterministic_level=level)
    digest = hashlib.md5(f"M()mode=max-autotune|npu_deterministic_level={level}".encode()).hexdigest()
    assert found == f"M_dynamic_{digest}", found
    if other != level:
        assert model_info("M", "M()", "mode=max-autotune", True, [], deterministic_level=other) != found


class _FakeNpu:
    """Plays only ``torch_npu.npu._get_deterministic_level`` for the level lookup; the formula is what is tested."""

    def __init__(self, level: object) -> None:
        self.npu = self
        self._level = level

    def _get_deterministic_level(self) -> object:
        return self._level


def test_deterministic_level_is_read_only_from_an_imported_torch_npu() -> None:
    """CC-8: L is 0 without torch_npu among the imported modules (it is never imported), else torch_npu's level."""
    assert npu_deterministic_level({}) == 0
    assert npu_deterministic_level({"torch": object()}) == 0
    assert npu_deterministic_level({"torch_npu": _FakeNpu(2)}) == 2
    with pytest.raises(TypeError, match="'2'"):
        npu_deterministic_level({"torch_npu": _FakeNpu("2")})


def test_deterministic_level_lookup_does_not_import_torch_npu() -> None:
    """CC-8: reading L never imports torch_npu (it would pull CANN into every process)."""
    code = ("import sys; from torchair_ref.inference.paths import npu_deterministic_level as f; "
            "print(f(sys.modules), 'torch_npu' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.stdout.split() == ["0", "False"], out.stdout + out.stderr


@given(class_name=names, module_repr=st.text(), options=st.text(), dynamic=st.booleans())
def test_model_info_digest_is_32_lowercase_hex(class_name: str, module_repr: str, options: str, dynamic: bool) -> None:
    """CC-8: the last part of model_info is 32 lowercase hex digits, for any (unicode) repr and options."""
    found = model_info(class_name, module_repr, options, dynamic, [], deterministic_level=0)
    assert re.fullmatch(rf"{class_name}_(dynamic|static)_[0-9a-f]{{32}}", found), f"found {found!r}"


@given(
    class_name=names,
    module_repr=st.text(max_size=40),
    options=st.text(max_size=40),
    other=st.text(max_size=40),
    dynamic=st.booleans(),
)
def test_digest_changes_when_module_repr_or_options_change(
    class_name: str, module_repr: str, options: str, other: str, dynamic: bool
) -> None:
    """CC-10: same inputs give the same model_info; a different module repr or options string changes md5hex."""
    base = model_info(class_name, module_repr, options, dynamic, [], deterministic_level=0)
    again = model_info(class_name, module_repr, options, dynamic, [], deterministic_level=0)
    assert base == again, f"{base!r} not reproducible"
    if other != module_repr:
        changed = model_info(class_name, other, options, dynamic, [], deterministic_level=0)
        assert changed != base, f"repr {module_repr!r} -> {other!r} kept {base!r}"
    if other != options:
        changed = model_info(class_name, module_repr, other, dynamic, [], deterministic_level=0)
        assert changed != base, f"options {options!r} -> {other!r} kept {base!r}"


def test_parameter_values_are_not_an_input() -> None:
    """CC-10: the formula takes no tensors: modules with different parameter values give the same model_info."""
    torch = pytest.importorskip("torch")
    expected_inputs = ["class_name", "module_repr", "options", "dynamic", "tags", "deterministic_level"]
    found_inputs = list(inspect.signature(model_info).parameters)
    assert found_inputs == expected_inputs, f"model_info inputs: {found_inputs!r}"
    torch.manual_seed(0)
    first = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU())
    torch.manual_seed(1)
    second = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU())
    assert not torch.equal(first[0].weight, second[0].weight), "the two modules should hold different weights"
    infos = [model_info("Sequential", str(m), options_string(CompilerConfig()), True, [], deterministic_level=0)
             for m in (first, second)]
    assert infos[0] == infos[1], f"parameter values changed model_info: {infos!r}"


def test_options_outside_the_options_string_keep_the_path() -> None:
    """CC-10, CF-3: export flags do not change model_info; a compile option does."""
    plain, exported, eager = CompilerConfig(), CompilerConfig(), CompilerConfig()
    exported.export.experimental.enable_record_nn_module_stack = True
    eager.debug.run_eagerly = True
    info = {name: model_info("M", "M()", options_string(c), False, [], deterministic_level=0) for name, c in
            (("plain", plain), ("exported", exported), ("eager", eager))}
    assert info["plain"] == info["exported"], f"an export flag changed model_info: {info!r}"
    assert info["plain"] != info["eager"], f"debug.run_eagerly did not change model_info: {info!r}"


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"world_size": 1, "process_rank": 0, "global_rank": None, "tp_rank": None, "pp_rank": None}, ""),
        ({"world_size": 1, "process_rank": 0, "global_rank": 7, "tp_rank": None, "pp_rank": None}, ""),
        ({"world_size": 2, "process_rank": 1, "global_rank": None, "tp_rank": None, "pp_rank": None},
         "world2global_rank1"),
        ({"world_size": 2, "process_rank": 1, "global_rank": 5, "tp_rank": None, "pp_rank": None},
         "world2global_rank5"),
        ({"world_size": 1, "process_rank": 0, "global_rank": None, "tp_rank": 0, "pp_rank": None}, "tp_rank0"),
        ({"world_size": 1, "process_rank": 0, "global_rank": None, "tp_rank": None, "pp_rank": 3}, "pp_rank3"),
        ({"world_size": 8, "process_rank": 3, "global_rank": None, "tp_rank": 1, "pp_rank": 0},
         "world8global_rank3_tp_rank1_pp_rank0"),
    ],
)
def test_dist_level_cases(kwargs: dict[str, int | None], expected: str) -> None:
    """CC-8: dist level = world{W}global_rank{R} (W > 1), tp_rank{t}, pp_rank{p}, joined by '_'; empty if none."""
    found = dist_level(**kwargs)
    assert found == expected, f"dist_level({kwargs!r}): expected {expected!r}, found {found!r}"


@st.composite
def dist_inputs(draw: st.DrawFn) -> dict[str, int | None]:
    world_size = draw(st.integers(min_value=1, max_value=64), label="world_size")
    return {
        "world_size": world_size,
        "process_rank": draw(st.integers(min_value=0, max_value=world_size - 1), label="process_rank"),
        "global_rank": draw(optional_ranks, label="global_rank"),
        "tp_rank": draw(optional_ranks, label="tp_rank"),
        "pp_rank": draw(optional_ranks, label="pp_rank"),
    }


@given(kwargs=dist_inputs())
def test_dist_level_for_drawn_ranks(kwargs: dict[str, int | None]) -> None:
    """CC-8: each part appears exactly when it applies, in the order world/global, tp, pp."""
    found = dist_level(**kwargs)
    pattern = r"(?:world(\d+)global_rank(\d+))?_?(?:tp_rank(\d+))?_?(?:pp_rank(\d+))?"
    match = re.fullmatch(pattern, found)
    assert match and not found.startswith("_") and not found.endswith("_") and "__" not in found, (
        f"malformed dist level {found!r} for {kwargs!r}"
    )
    world, rank, tp, pp = match.groups()
    multi = kwargs["world_size"] > 1
    expected_rank = kwargs["process_rank"] if kwargs["global_rank"] is None else kwargs["global_rank"]
    assert (world, rank) == ((str(kwargs["world_size"]), str(expected_rank)) if multi else (None, None)), (
        f"world part of {found!r} for {kwargs!r}"
    )
    for name, part in (("tp_rank", tp), ("pp_rank", pp)):
        expected_part = None if kwargs[name] is None else str(kwargs[name])
        assert part == expected_part, f"{name} part {part!r} of {found!r}, expected {expected_part!r}"


@pytest.mark.parametrize(
    ("overrides", "error", "named"),
    [
        ({"tp_rank": True}, TypeError, "tp_rank"),
        ({"pp_rank": False}, TypeError, "pp_rank"),
        ({"global_rank": True}, TypeError, "global_rank"),
        ({"pp_rank": -1}, ValueError, "pp_rank"),
        ({"tp_rank": -3}, ValueError, "tp_rank"),
        ({"global_rank": -1}, ValueError, "global_rank"),
        ({"tp_rank": 1.0}, TypeError, "tp_rank"),
        ({"pp_rank": "0"}, TypeError, "pp_rank"),
        ({"world_size": 0}, ValueError, "world_size"),
        ({"world_size": True}, TypeError, "world_size"),
        ({"process_rank": -1}, ValueError, "process_rank"),
        ({"process_rank": 2}, ValueError, "process_rank"),
    ],
)
def test_dist_level_rejects_bad_ranks(overrides: dict[str, object], error: type[Exception], named: str) -> None:
    """CC-8: bool, non-int or negative ranks and world_size < 1 raise with the argument named."""
    kwargs = {"world_size": 2, "process_rank": 0, "global_rank": None, "tp_rank": None, "pp_rank": None, **overrides}
    with pytest.raises(error) as caught:
        dist_level(**kwargs)
    assert named in str(caught.value), f"{named!r} not named in {str(caught.value)!r}"


def test_cache_file_layout() -> None:
    """CC-8: <root>/<model_info>/<dist>/<func>/compiled_module, with an empty dist level skipped, no realpath."""
    with_dist = cache_file("/r/../root", "M_static_x", "tp_rank0", "forward")
    without = cache_file("/r/../root", "M_static_x", "", "forward")
    assert with_dist == "/r/../root/M_static_x/tp_rank0/forward/compiled_module", f"found {with_dist!r}"
    assert without == "/r/../root/M_static_x/forward/compiled_module", f"found {without!r}"


@given(
    root=absolute_dirs,
    class_name=names,
    func_name=names,
    module_repr=st.text(max_size=30),
    mode=st.sampled_from(["max-autotune", "reduce-overhead"]),
    ge_cache=st.booleans(),
    dynamic=st.booleans(),
    dist=dist_inputs(),
)
def test_full_path_is_deterministic_and_parses_back(
    root: str, class_name: str, func_name: str, module_repr: str, mode: str, ge_cache: bool, dynamic: bool, dist: dict
) -> None:
    """CC-8, CC-10: the composed path is the same for the same inputs and its components read back as given."""

    def compose() -> str:
        config = CompilerConfig()
        config.mode = mode
        info = model_info(class_name, module_repr, options_string(config), dynamic, cache_tags(mode, ge_cache),
                          deterministic_level=0)
        return cache_file(root, info, dist_level(**dist), func_name)

    path = compose()
    assert path == compose(), f"not reproducible: {path!r}"
    parts = pathlib.PurePosixPath(path).relative_to(root).parts
    level = dist_level(**dist)
    expected_depth = 4 if level else 3
    assert len(parts) == expected_depth, f"{path!r} has {len(parts)} parts under {root!r}, expected {expected_depth}"
    assert parts[-2:] == (func_name, "compiled_module"), f"tail of {path!r}"
    assert parts[0].startswith(f"{class_name}_{'dynamic' if dynamic else 'static'}_"), f"model_info of {path!r}"
    if level:
        assert parts[1] == level, f"dist level {parts[1]!r} != {level!r}"


@pytest.mark.parametrize("bad", ["", ".", "..", "a/b", "/abs", "nul\0byte"])
def test_unsafe_names_are_rejected(bad: str) -> None:
    """CC-8: func_name and class_name must be single directory names (no separator, not '.'/'..'/empty)."""
    with pytest.raises(ValueError) as func_error:
        cache_file("/root", "M_static_x", "", bad)
    assert "func_name" in str(func_error.value) and repr(bad) in str(func_error.value), str(func_error.value)
    with pytest.raises(ValueError) as class_error:
        model_info(bad, "", "", False, [], deterministic_level=0)
    assert "class_name" in str(class_error.value) and repr(bad) in str(class_error.value), str(class_error.value)


def test_modules_do_not_import_torch() -> None:
    """CC-8: the path formula and the config are pure Python: importing them does not import torch."""
    package_parent = os.path.dirname(os.path.dirname(torchair_ref.__file__))
    code = (
        "import sys, torchair_ref.config, torchair_ref.inference.paths; "
        "assert 'torch' not in sys.modules, sorted(m for m in sys.modules if m.split('.')[0] == 'torch')"
    )
    env = {**os.environ, "PYTHONPATH": package_parent}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, f"importing the modules pulled in torch: {result.stderr}"
