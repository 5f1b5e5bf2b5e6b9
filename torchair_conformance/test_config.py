"""SPEC section 1: ``CompilerConfig`` and ``get_npu_backend`` (CF-1..CF-4)."""

from __future__ import annotations

import functools

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torchair_conformance import harness, models, oracle, profiles
from torchair_conformance import strategies as cst
from torchair_conformance.assertions import assert_outputs_close

OPTION_VALUES = {"mode": cst.MODES, **{path: (False, True) for path in cst.BOOL_OPTIONS}}


def _get(config, path):
    target = config
    for part in path.split("."):
        target = getattr(target, part)
    return target


def _reads_as(raw, value) -> bool:
    """CF-1: whether an option read back as ``raw`` holds ``value``, in the implementation's own representation:
    a bare value (the reference), or upstream's ``OptionValue`` whose ``.value`` is ``"1"``/``"0"`` for a boolean
    and ``str(value)`` otherwise."""
    if hasattr(raw, "value"):
        return raw.value == ({True: "1", False: "0"}.get(value, str(value)) if isinstance(value, bool) else str(value))
    return raw == value and type(raw) is type(value)


def _held(config, path):
    """The value of ``OPTION_VALUES[path]`` that ``config``'s option ``path`` holds (CF-1's representation)."""
    raw = _get(config, path)
    held = [v for v in OPTION_VALUES[path] if _reads_as(raw, v)]
    assert len(held) == 1, f"config.{path} reads {raw!r}: expected exactly one of {OPTION_VALUES[path]!r}"
    return held[0]


@pytest.mark.clause("CF-1")
@pytest.mark.parametrize("path", sorted(OPTION_VALUES))
def test_documented_options_exist_with_their_defaults(impl, path):
    default = {"mode": "max-autotune"}.get(path, False)
    found = _get(impl.CompilerConfig(), path)
    assert _reads_as(found, default), f"CompilerConfig().{path}: expected default {default!r}, found {found!r}"


@pytest.mark.clause("CF-1")
@pytest.mark.parametrize(("path", "value"), [(p, v) for p in sorted(OPTION_VALUES) for v in OPTION_VALUES[p]])
def test_options_accept_their_allowed_values_as_written(impl, path, value):
    config = harness.make_config(impl, [(path, value)])
    found = _get(config, path)
    assert _reads_as(found, value), f"after config.{path} = {value!r}, config.{path} reads {found!r}"


_BAD_VALUES = st.one_of(st.text(max_size=12), st.integers(), st.floats(allow_nan=False), st.none())


@pytest.mark.clause("CF-1")
@pytest.mark.parametrize("path", sorted(OPTION_VALUES))
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("cheap", len(OPTION_VALUES)))
def test_values_outside_the_allowed_set_raise_naming_the_option(impl, path, data):
    # Values equal to an allowed one (0 == False, 1.0 == True) are left to the test below, so that each known
    # divergence of upstream shows in a case of its own on every run (IMPL-5).
    allowed = OPTION_VALUES[path]
    value = data.draw(_BAD_VALUES.filter(lambda v: not any(v == a for a in allowed)), label="bad_value")
    leaf = path.split(".")[-1]
    with pytest.raises((ValueError, AttributeError)) as info:
        harness.make_config(impl, [(path, value)])
    assert leaf in str(info.value), f"the error for config.{path} = {value!r} must name {leaf!r}: {info.value!r}"


#: numbers that compare equal to True or False without being a bool
_BOOL_LOOKALIKES = (0, 1, 0.0, 1.0)


@pytest.mark.clause("CF-1")
@pytest.mark.parametrize("path", sorted(cst.BOOL_OPTIONS))
def test_bool_options_reject_numbers_equal_to_true_or_false(impl, path):
    accepted = []
    for value in _BOOL_LOOKALIKES:
        try:
            harness.make_config(impl, [(path, value)])
        except (ValueError, AttributeError):
            continue
        accepted.append(value)
    assert not accepted, (f"config.{path} is a bool option (CF-1): it accepted {accepted!r} (numbers equal to "
                          "True or False) where a value outside (False, True) must raise")


OPTION_GROUPS = ("", "debug.", "ge_config.", "experimental_config.", "export.experimental.")


@pytest.mark.clause("CF-1")
@pytest.mark.parametrize("group", OPTION_GROUPS)
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("cheap", len(OPTION_GROUPS)))
def test_unknown_options_raise_naming_the_option(impl, group, data):
    name = data.draw(st.from_regex(r"[a-z][a-z_]{2,15}", fullmatch=True)
                     .filter(lambda n: f"{group}{n}" not in OPTION_VALUES and n not in ("debug", "export", "value")),
                     label="unknown_name")
    with pytest.raises((ValueError, AttributeError)) as info:
        harness.make_config(impl, [(f"{group}{name}", True)])
    assert name in str(info.value), f"the error for unknown option {group}{name} must name it: {info.value!r}"


@pytest.mark.clause("CF-2")
@given(options=cst.config_options(modes=cst.MODES), data=st.data())
@settings(max_examples=profiles.examples("cheap"))
def test_configs_with_equal_values_are_equal_however_built(impl, options, data):
    reordered = data.draw(st.permutations(options), label="same_assignments_reordered")
    # Assigning defaults explicitly must not make a config different from one that never set them.
    explicit_defaults = [("mode", "max-autotune")] + [(p, False) for p in cst.BOOL_OPTIONS]
    a = harness.make_config(impl, options)
    b = harness.make_config(impl, explicit_defaults + list(reordered))
    assert a == b, f"configs built from {options!r} and {explicit_defaults + list(reordered)!r} compare unequal"
    assert not (a != b), "`!=` disagrees with `==`"


@pytest.mark.clause("CF-2")
def test_two_default_configs_are_equal(impl):
    assert impl.CompilerConfig() == impl.CompilerConfig(), "two separately built default configs compare unequal"


@pytest.mark.clause("CF-2")
@pytest.mark.parametrize("path", sorted(OPTION_VALUES))
@given(options=cst.config_options(modes=cst.MODES), data=st.data())
@settings(max_examples=profiles.examples_per_case("cheap", len(OPTION_VALUES)))
def test_configs_differing_in_one_option_are_unequal(impl, path, options, data):
    base = harness.make_config(impl, options)
    current = _held(base, path)
    other_value = data.draw(st.sampled_from([v for v in OPTION_VALUES[path] if v != current]), label="other_value")
    changed = harness.make_config(impl, list(options) + [(path, other_value)])
    assert base != changed, f"configs differing in {path} ({current!r} vs {other_value!r}) compare equal"


@pytest.mark.clause("CF-3")
@given(options=cst.config_options(modes=cst.MODES))
@settings(max_examples=profiles.examples("cheap"))
def test_as_dict_is_two_dicts_of_strings(impl, options):
    result = harness.make_config(impl, options).as_dict()
    assert isinstance(result, tuple) and len(result) == 2, f"as_dict() must return (local, global), got {result!r}"
    for name, part in zip(("local", "global"), result):
        assert isinstance(part, dict), f"{name} options must be a dict, got {type(part)!r}"
        bad = {k: v for k, v in part.items() if not (isinstance(k, str) and isinstance(v, str))}
        assert not bad, f"{name} options must map strings to strings; offending items: {bad!r}"


@pytest.mark.clause("CF-3")
@pytest.mark.parametrize("flag", cst.EXPORT_FLAGS)
@given(options=cst.config_options(modes=cst.MODES))
@settings(max_examples=profiles.examples_per_case("cheap", len(cst.EXPORT_FLAGS)))
def test_export_flags_are_not_in_the_options_string(impl, flag, options):
    flipped = harness.make_config(impl, list(options) + [(flag, not _held(harness.make_config(impl, options), flag))])
    before = oracle.options_string(harness.make_config(impl, options).as_dict())
    after = oracle.options_string(flipped.as_dict())
    assert before == after, f"flipping {flag} changed the options string: {before!r} -> {after!r}"
    # By group, not by substring: GE options such as ge.exportCompileStat belong in the string (CF-3).
    keys = [k for part in harness.make_config(impl, options).as_dict() for k in part]
    export_group = [k for k in keys if k.split(".")[0] == "export" or k in cst.EXPORT_FLAGS
                    or k in {f.rsplit(".", 1)[1] for f in cst.EXPORT_FLAGS}]
    assert not export_group, f"options of the export group must not be in the options string: {export_group!r}"


@pytest.mark.clause("CF-3")
@given(options=cst.config_options(modes=cst.MODES))
@settings(max_examples=profiles.examples("cheap"))
def test_mode_is_in_the_options_string(impl, options):
    mode = cst.mode_of(options)
    other = next(m for m in cst.MODES if m != mode)
    a = oracle.options_string(harness.make_config(impl, options).as_dict())
    b = oracle.options_string(harness.make_config(impl, list(options) + [("mode", other)]).as_dict())
    assert a != b, f"changing mode {mode!r} -> {other!r} left the options string unchanged: {a!r}"
    assert mode in a, f"the options string must carry the mode {mode!r}: {a!r}"


@pytest.mark.clause("CF-4")
@given(options=st.one_of(st.none(), cst.config_options(modes=cst.MODES)))
@settings(max_examples=profiles.examples("cheap"))
def test_get_npu_backend_is_a_partial_carrying_the_config(impl, options):
    config = None if options is None else harness.make_config(impl, options)
    backend = impl.get_npu_backend(compiler_config=config)
    assert isinstance(backend, functools.partial), f"get_npu_backend returned {type(backend)!r}, not functools.partial"
    carried = backend.keywords.get("compiler_config")
    if config is None:
        assert isinstance(carried, impl.CompilerConfig), (
            f"with no config, the partial must carry a default: {carried!r}")
    else:
        assert carried is config, f"the partial must carry the very config passed: {carried!r} is not {config!r}"


@pytest.mark.clause("CF-4")
@given(module=cst.module_specs(max_depth=2), data=st.data())
@settings(max_examples=profiles.examples("compile"))
def test_get_npu_backend_works_as_a_torch_compile_backend(impl, module, data):
    harness.fresh_dynamo()
    inputs = data.draw(cst.input_specs(module, layouts=("contiguous",)), label="inputs")
    config = harness.make_config(impl, [("debug.run_eagerly", True)])
    m = models.build_module(module["structure"], module["seed"], module["dtype"])
    x = models.make_inputs(inputs)
    compiled = torch.compile(m, backend=impl.get_npu_backend(compiler_config=config), fullgraph=True)
    with torch.no_grad():
        assert_outputs_close(compiled(*x), m(*x), what="torch.compile with get_npu_backend vs eager")
