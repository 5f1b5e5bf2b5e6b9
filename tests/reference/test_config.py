"""The reference's CompilerConfig beyond what torchair_conformance/test_config.py asks of any implementation (CF-1..3):
its
error texts, groups that cannot be replaced, copies, repr, its exact option table and options string."""

from __future__ import annotations

import copy
import functools
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from torchair_ref.config import CompilerConfig, changes_compilation, options_string

# Written out here rather than read from the implementation, so that a change to its table shows up as a failure.
DEFAULTS: dict[str, object] = {
    "mode": "max-autotune",
    "debug.run_eagerly": False,
    "ge_config.enable_single_stream": False,
    "experimental_config.frozen_parameter": False,
    "export.experimental.auto_atc_config_generated": False,
    "export.experimental.enable_record_nn_module_stack": False,
}
ALLOWED: dict[str, tuple[object, ...]] = {
    path: ("max-autotune", "reduce-overhead") if path == "mode" else (False, True) for path in DEFAULTS
}
LOCAL = ("mode", "debug.run_eagerly")
GLOBAL = ("ge_config.enable_single_stream", "experimental_config.frozen_parameter")


def get_option(config: CompilerConfig, path: str) -> object:
    return functools.reduce(getattr, path.split("."), config)


def set_option(config: CompilerConfig, path: str, value: object) -> None:
    *groups, name = path.split(".")
    setattr(functools.reduce(getattr, groups, config), name, value)


def build(assignment: dict[str, object]) -> CompilerConfig:
    config = CompilerConfig()
    for path, value in assignment.items():
        set_option(config, path, value)
    return config


def values(config: CompilerConfig) -> dict[str, object]:
    return {path: get_option(config, path) for path in DEFAULTS}


@st.composite
def assignments(draw: st.DrawFn) -> dict[str, object]:
    """Some options set to allowed values (possibly their defaults), in a drawn order."""
    paths = draw(st.lists(st.sampled_from(list(DEFAULTS)), unique=True), label="paths set")
    return {path: draw(st.sampled_from(ALLOWED[path]), label=path) for path in paths}


@pytest.mark.parametrize(
    ("groups", "name", "full_path"),
    [
        ((), "modee", "modee"),
        (("debug",), "foo", "debug.foo"),
        (("ge_config",), "enable_single_streams", "ge_config.enable_single_streams"),
        (("export",), "auto_atc_config_generated", "export.auto_atc_config_generated"),
        (("export", "experimental"), "bar", "export.experimental.bar"),
    ],
)
def test_unknown_option_raises_attribute_error_naming_it(groups: tuple[str, ...], name: str, full_path: str) -> None:
    """CF-1: setting or reading an unknown option at any level raises AttributeError naming it and the known ones."""
    config = CompilerConfig()
    group = functools.reduce(getattr, groups, config)
    with pytest.raises(AttributeError) as set_error:
        setattr(group, name, True)
    with pytest.raises(AttributeError) as get_error:
        getattr(group, name)
    for error in (set_error, get_error):
        message = str(error.value)
        assert repr(full_path) in message, f"{full_path!r} not named in {message!r}"
        known_here = [p for p in DEFAULTS if p.startswith(".".join(groups))]
        assert all(p in message for p in known_here), f"known options {known_here!r} not all listed in {message!r}"
    assert values(config) == DEFAULTS, f"a rejected assignment changed the config: {values(config)!r}"


@pytest.mark.parametrize(
    ("path", "bad"),
    [("mode", bad) for bad in ("max_autotune", "", None, "MAX-AUTOTUNE", 1)]
    + [(path, bad) for path in DEFAULTS if path != "mode" for bad in (1, 0, "true", "True", None, 1.0)],
)
def test_value_outside_allowed_set_raises_value_error(path: str, bad: object) -> None:
    """CF-1: a value outside the allowed set (bools strictly: no 1, "true" or None) raises ValueError naming it."""
    config = CompilerConfig()
    with pytest.raises(ValueError) as error:
        set_option(config, path, bad)
    message = str(error.value)
    for expected in (repr(path), repr(bad), *(repr(a) for a in ALLOWED[path])):
        assert expected in message, f"{expected} missing from {message!r}"
    assert values(config) == DEFAULTS, f"a rejected value changed the config: {values(config)!r}"


@pytest.mark.parametrize("group_path", ["debug", "ge_config", "experimental_config", "export", "export.experimental"])
def test_groups_cannot_be_reassigned(group_path: str) -> None:
    """CF-1: an option group is not an option: assigning to it raises AttributeError naming it."""
    config = CompilerConfig()
    before = get_option(config, group_path)
    with pytest.raises(AttributeError, match=repr(group_path)):
        set_option(config, group_path, CompilerConfig())
    assert get_option(config, group_path) is before, f"group {group_path!r} was replaced"


def test_options_cannot_be_deleted() -> None:
    """CF-1: deleting an option raises AttributeError and keeps its value."""
    config = CompilerConfig()
    with pytest.raises(AttributeError, match="mode"):
        del config.mode
    assert config.mode == "max-autotune", f"mode changed to {config.mode!r}"


def test_equality_with_other_types_is_false() -> None:
    """CF-2: a config never equals a non-config (not even its own values as a dict)."""
    config = CompilerConfig()
    for other in (None, DEFAULTS, config.as_dict(), "CompilerConfig()"):
        assert config != other, f"CompilerConfig() == {other!r}"


def test_config_is_unhashable() -> None:
    """CF-2: a mutable value-compared config has no hash."""
    with pytest.raises(TypeError):
        hash(CompilerConfig())


@pytest.mark.parametrize("clone", [copy.deepcopy, copy.copy, lambda c: pickle.loads(pickle.dumps(c))])
def test_copies_are_equal_and_independent(clone) -> None:
    """CF-2: deepcopy/copy/pickle give an equal config whose options change independently of the original."""
    original = build({"mode": "reduce-overhead", "ge_config.enable_single_stream": True})
    duplicate = clone(original)
    assert duplicate == original, f"copy {values(duplicate)!r} != original {values(original)!r}"
    duplicate.debug.run_eagerly = True
    duplicate.export.experimental.auto_atc_config_generated = True
    assert original.debug.run_eagerly is False, "setting an option on the copy changed the original"
    assert original.export.experimental.auto_atc_config_generated is False, "nested group shared with the copy"
    assert duplicate != original, "copy still equal after an option changed"


def test_repr_lists_only_non_default_options() -> None:
    """CF-2: repr names the options that differ from the defaults, with their values."""
    assert repr(CompilerConfig()) == "CompilerConfig()", f"default repr is {CompilerConfig()!r}"
    text = repr(build({"mode": "reduce-overhead", "experimental_config.frozen_parameter": True}))
    for expected in ("mode='reduce-overhead'", "experimental_config.frozen_parameter=True"):
        assert expected in text, f"{expected} missing from {text}"
    assert "run_eagerly" not in text, f"a default option is listed in {text}"


def test_as_dict_of_default_config() -> None:
    """CF-3: as_dict splits the compile-relevant options into (local, global), dotted path -> str(value)."""
    local, global_ = CompilerConfig().as_dict()
    assert local == {"mode": "max-autotune", "debug.run_eagerly": "False"}, f"local options: {local!r}"
    assert global_ == {"ge_config.enable_single_stream": "False", "experimental_config.frozen_parameter": "False"}, (
        f"global options: {global_!r}"
    )


@given(assignment=assignments())
def test_as_dict_holds_str_values_of_compile_options_only(assignment: dict[str, object]) -> None:
    """CF-3: as_dict holds str(value) of exactly the local/global options; export flags are absent."""
    config = build(assignment)
    local, global_ = config.as_dict()
    assert list(local) == list(LOCAL) and list(global_) == list(GLOBAL), f"keys: {list(local)!r}, {list(global_)!r}"
    for path, value in {**local, **global_}.items():
        assert value == str(get_option(config, path)), f"{path}: {value!r} != str({get_option(config, path)!r})"


def test_options_string_of_default_config() -> None:
    """CF-3: the options string is global then local options, in declaration order, joined as k=v with commas."""
    expected = (
        "ge_config.enable_single_stream=False,experimental_config.frozen_parameter=False,"
        "mode=max-autotune,debug.run_eagerly=False"
    )
    assert options_string(CompilerConfig()) == expected, f"found {options_string(CompilerConfig())!r}"


@given(assignment=assignments())
def test_options_string_is_global_updated_with_local(assignment: dict[str, object]) -> None:
    """CF-3: options_string(config) equals the join over as_dict()'s global updated with its local."""
    config = build(assignment)
    local, merged = config.as_dict()
    merged.update(local)
    expected = ",".join(f"{k}={v}" for k, v in merged.items())
    assert options_string(config) == expected, f"{options_string(config)!r} != {expected!r}"


@given(first=assignments(), second=assignments())
def test_options_string_changes_iff_a_compile_option_changes(
    first: dict[str, object], second: dict[str, object]
) -> None:
    """CF-3: two configs' options strings differ iff some local or global option differs; export flags never count."""
    a, b = build(first), build(second)
    relevant_differs = any(get_option(a, p) != get_option(b, p) for p in LOCAL + GLOBAL)
    assert (options_string(a) != options_string(b)) is relevant_differs, (
        f"{values(a)!r} vs {values(b)!r}: {options_string(a)!r} vs {options_string(b)!r}"
    )


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("export.experimental.auto_atc_config_generated", False),
        ("export.anything", False),
        ("ge_config.export_compile_stat", True),
        ("exported.flag", True),
        ("debug.export", True),
        ("mode", True),
    ],
)
def test_options_string_excludes_by_group_not_by_substring(path: str, expected: bool) -> None:
    """CF-3: only options of the export group stay out; a name that merely contains "export" is a compile option."""
    assert changes_compilation(path) is expected, path
