"""White-box tests of the guard translation and its Dynamo-free checks (SPEC CC-21, CC-22)."""
from __future__ import annotations

import base64
import json
import marshal
import os
import re
import subprocess
import sys
import types
import zlib

import pytest
import torch

from tests.conftest import program_env
from torchair_ref.inference import (
    artifact,
    guard_check,
    guard_expressions,
    guard_kinds,
    guard_read,
    guard_spec,
    guard_values,
    saving,
)
from torchair_ref.inference.guard_kinds import ambient


def translate(kind, source, parts, value, *, fixed, graph_inputs):
    """One raw guard through the registry, as `guard_read` gives it."""
    return guard_kinds.translate(guard_kinds.RawGuard(kind, source, tuple(parts), value, fixed, graph_inputs))


def test_sources_parse_into_steps():
    assert guard_spec.parse_source("L['self']._modules['lin']._parameters['weight']") == (
        ["L", "self"], [["attr", "_modules"], ["item", "lin"], ["attr", "_parameters"], ["item", "weight"]])
    hooks = "L['self']._forward_hooks"
    assert guard_spec.parse_source(f"{hooks}[list(dict.keys({hooks}))[1]].__code__")[1][-2:] == [
        ["at", 1], ["attr", "__code__"]]
    assert guard_spec.parse_source("dict(type(G['m']).__mro__[1].__dict__)")[1] == [
        ["type", None], ["attr", "__mro__"], ["item", 1], ["attr", "__dict__"], ["dict", None]]
    for bad in ("L['x'].__class__.__subclasses__()", "__import__('os')", "L[0]", "L['x'][L['y']]"):
        with pytest.raises(guard_spec.UnknownGuard):
            guard_spec.parse_source(bad)


@pytest.mark.parametrize("source", [
    "L['self']._modules['blocks']._modules['0']._parameters['weight']", "G['x']", "L['kv'][0]", "L['kv'][10]",
    "L['m']['a.b]c']", "L['m']['\"q\"']", "L['x'].é", "L['x'].class", "L['x'][01]", "L['x'][-1]", "L['x'] [0]",
    "L['x'].size()[0]", "L['a'].b.c['d'][2].e",
])
def test_the_plain_source_reader_agrees_with_the_parser(source):
    """The regex fast path of `parsed_source` reads a source exactly as `ast` does, or leaves it to `ast`."""
    try:
        expected = guard_spec._parse_with_ast(source)
    except guard_spec.UnknownGuard:
        with pytest.raises(guard_spec.UnknownGuard):
            guard_spec.parse_source(source)
        return
    assert guard_spec.parse_source(source) == (list(expected[0]), [list(step) for step in expected[1]])


def test_shape_expressions_become_templates_and_reject_other_code():
    template, sources = guard_expressions.parse_expression("L['n'] >= 0 and L['n'] <= L['x'].size()[0]")
    assert sources == ["L['n']", "L['x'].size()[0]"]
    assert template == "_s0 >= 0 and _s0 <= _s1"
    written = guard_expressions.substitute(template, {"_s0": "n", "_s1": "x.size()[0]"}, "_p_")
    assert written == "n >= 0 and n <= (x.size()[0])"
    for bad in ("L['x'].size()[0] + __import__('os').getpid()", "[i for i in L['x']]", "L['x'].storage().data_ptr()"):
        with pytest.raises(guard_spec.UnknownGuard):
            guard_expressions.parse_expression(bad)


def test_a_float_argument_guard_is_kept_as_isnan():
    """A float argument the graph specialised on: Dynamo guards `not math.isnan(...)`; other calls stay refused."""
    template, sources = guard_expressions.parse_expression("not math.isnan(L['scale'])")
    assert (template, sources) == ("not isnan(_s0)", ["L['scale']"])
    assert guard_expressions.substitute(template, {"_s0": "scale"}, "_p_") == "not _p_isnan(scale)"
    for bad in ("not os.isnan(L['scale'])", "math.sqrt(L['scale']) > 0", "math.pi < L['scale']", "math.e(1)"):
        with pytest.raises(guard_spec.UnknownGuard):
            guard_expressions.parse_expression(bad)


def test_when_depends_on_the_root():
    assert guard_spec.when(["L['x'].size()[0]"], frozenset({"self"})) == "call"
    assert guard_spec.when(["L['self'].kind", "G['helper'].__code__"], frozenset({"self"})) == "first"


def test_unknown_kind_is_refused_with_its_name():
    with pytest.raises(guard_spec.UnknownGuard, match="DICT_VERSION"):
        translate("DICT_VERSION", "G['table']", ["___dict_version(G['table']) == 7"], {},
                             fixed=frozenset({"self"}), graph_inputs=frozenset())


def test_comments_are_stripped_but_not_inside_strings():
    assert guard_read.strip_comment("L['mode'] == 'a # b'   # if mode == ...  # x.py:3") == "L['mode'] == 'a # b'"


def test_code_digest_ignores_the_hash_seed():
    program = (
        "import sys; sys.path[:0] = sys.argv[1:]\n"
        "from torchair_ref.inference.guard_spec import class_digest, code_digest\n"
        "def f(kind):\n    return kind in {'alpha', 'beta', 'gamma', 'delta', 'epsilon'}\n"
        "def g(x):\n    def h(y):\n        return y in {'a', 'b', 2.5}\n    return h(x), ('t', (1, None))\n"
        "class C:\n    K, N = 'x', 2\n    def m(self):\n        return self in {'p', 'q'}\n"
        "print(code_digest(f.__code__), code_digest(g.__code__), class_digest(C))\n"
    )
    impl = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "impl")
    digests = set()
    for seed in ("1", "2", "3"):
        out = subprocess.run([sys.executable, "-c", program, impl], env={**os.environ, "PYTHONHASHSEED": seed},
                             capture_output=True, text=True, check=True)
        digests.add(out.stdout.strip())
    assert len(digests) == 1, digests


def test_class_digest_follows_the_code():
    class A:
        def forward(self):
            return 1

    class B:
        def forward(self):
            return 2

    B.__qualname__ = A.__qualname__
    assert guard_spec.class_digest(A) != guard_spec.class_digest(B)
    assert guard_spec.class_digest(torch.nn.Linear) is None


def test_a_class_is_identified_by_its_traced_methods_and_its_members_names():
    """CC-21 (f): with the members the trace reached, a class's digest follows their code, every member's name and
    plain constant, and no other method's code; `describe_object` compares a class that way too."""
    class A:
        kind = "a"

        def forward(self):
            return 1

        def spare(self):
            return 1

    class SpareDiffers:  # the same forward, another spare
        kind = "a"

        def forward(self):
            return 1

        def spare(self):
            return 2

    class ForwardDiffers:
        kind = "a"

        def forward(self):
            return 2

        def spare(self):
            return 1

    class Inherits(A):
        pass

    for cls in (SpareDiffers, ForwardDiffers):
        cls.__qualname__ = A.__qualname__
    traced = frozenset({A.forward.__code__})
    assert guard_values.traced_members(A, traced) == ("forward",)
    assert guard_values.traced_members(Inherits, traced) == ("forward",)  # found in a base
    assert guard_values.traced_members(A, frozenset()) == ()
    assert guard_values.class_digest(A, ["forward"]) == guard_values.class_digest(SpareDiffers, ("forward",))
    assert guard_values.class_digest(A) != guard_values.class_digest(SpareDiffers)  # all of the code
    assert guard_values.class_digest(A, ["forward"]) != guard_values.class_digest(ForwardDiffers, ["forward"])
    assert guard_values.class_digest(A, ["spare"]) == guard_values.class_digest(ForwardDiffers, ["spare"])
    vars_a = {k: v for k, v in vars(A).items() if k not in ("__dict__", "__weakref__")}
    twin = type("A", (), dict(vars_a))
    twin.__qualname__ = A.__qualname__
    assert guard_values.class_digest(twin, ["forward"]) == guard_values.class_digest(A, ["forward"])
    twin.extra = 5  # a member more: a lookup on the class may find it
    assert guard_values.class_digest(twin, ["forward"]) != guard_values.class_digest(A, ["forward"])
    twin.extra, twin.kind = None, "b"
    del twin.extra
    assert guard_values.class_digest(twin, ["forward"]) != guard_values.class_digest(A, ["forward"])  # a constant
    described = guard_values.describe_object(A, traced)
    assert described["class"]["members"] == ["forward"]
    assert guard_values.describe_object(SpareDiffers, like=described) == described
    assert guard_values.describe_object(ForwardDiffers, like=described) != described
    assert guard_values.describe_object(A)["class"]["members"] is None  # no trace known: all of its code


def test_a_class_is_also_identified_by_the_methods_python_or_dynamo_may_run_untraced():
    """CC-21 (f): special methods (Python calls them: `__eq__` of a dict key, `__subclasshook__` of an isinstance)
    and methods Dynamo runs for real (`assume_constant_result`) are digested even when the trace did not reach
    them."""
    class Special:
        def __eq__(self, other):
            return True

        __hash__ = None

        @torch.compiler.assume_constant_result
        def width(self):
            return 4

        @classmethod
        def __subclasshook__(cls, other):
            return NotImplemented

        def plain(self):
            return 1

    assert guard_values.traced_members(Special, frozenset()) == ("__eq__", "__subclasshook__", "width")


def test_first_call_checks_name_the_failing_guard():
    module = torch.nn.Linear(2, 2)
    specs = translate("TENSOR_MATCH", "L['self']._parameters['weight']",
                                 ["check_tensor(L['self']._parameters['weight'], Parameter, DispatchKeySet(CPU), "
                                  "torch.float32, device=None, requires_grad=True, size=[2, 2], stride=[2, 1])"],
                                 module.weight, fixed=frozenset({"self"}), graph_inputs=frozenset())
    specs += translate("FALSE_MATCH", "L['self'].training", ["L['self'].training == False"], False,
                                  fixed=frozenset({"self"}), graph_inputs=frozenset())
    module.eval()
    assert guard_check.first_call_failure(specs, module, torch.nn.Linear.forward, {}) is None
    module.train()
    assert "FALSE_MATCH" in guard_check.first_call_failure(specs, module, torch.nn.Linear.forward, {})
    wider = torch.nn.Linear(3, 2).eval()
    assert "TENSOR_MATCH" in guard_check.first_call_failure(specs, wider, torch.nn.Linear.forward, {})


def _wrapped(specs):
    def method(self, x, n, *rest, mask=None, **extra):
        return ("ran", n)

    failures = []

    def on_fail(spec, *args, **kwargs):
        guard = None if spec is None else spec.guard
        failures.append(guard)
        return ("failed", guard)

    wrapped = guard_check.guarded_method(method, method, specs, on_fail, {})
    return types.MethodType(wrapped, object()), failures


def test_per_call_checks_run_before_the_call():
    kw = dict(fixed=frozenset({"self"}), graph_inputs=frozenset({"L['x']"}))
    specs = (
        translate("LAMBDA_GUARD", None, ["4 <= L['x'].size()[0]", "L['n'] != 1"], None, **kw)
        + translate("NONE_MATCH", "L['mask']", ["L['mask'] is None"], None, **kw)
        + translate("EQUALS_MATCH", "L['n']", ["L['n'] == 3"], 3, **kw)
        + translate("LENGTH_CHECK", "L['rest']", ["len(L['rest']) == 1"], (1,), **kw)
        + translate("NO_TENSOR_ALIASING", None, ["check_no_aliasing(L['x'], L['rest'][0])"], None, **kw)
    )
    call, failures = _wrapped(specs)
    x, y = torch.zeros(8), torch.zeros(8)
    assert call(x, 3, y) == ("ran", 3)
    assert call(torch.zeros(2), 3, y) == ("failed", "LAMBDA_GUARD")
    assert call(x, 4, y) == ("failed", "EQUALS_MATCH")
    assert call(x, 3, y, mask=y) == ("failed", "NONE_MATCH")
    assert call(x, 3, y, y) == ("failed", "LENGTH_CHECK")
    assert call(x, 3, x) == ("failed", "NO_TENSOR_ALIASING")
    assert call(x, 3) == ("failed", "LENGTH_CHECK")


class _ChangesWhenCompared:
    """An argument whose first comparison fails and every later one holds: state that changes while it is checked."""

    def __init__(self) -> None:
        self.compared = 0

    def __ne__(self, other: object) -> bool:
        self.compared += 1
        return self.compared > 1


def test_a_call_whose_checks_fail_together_but_hold_alone_names_no_guard():
    kw = dict(fixed=frozenset({"self"}), graph_inputs=frozenset())
    specs = (translate("EQUALS_MATCH", "L['x']", ["L['x'] == 3"], 3, **kw)
             + translate("LAMBDA_GUARD", None, ["L['n'] != 1"], None, **kw))
    call, failures = _wrapped(specs)
    changing = _ChangesWhenCompared()
    assert call(3, changing) == ("failed", None)  # not the first check (EQUALS_MATCH), which held throughout
    assert changing.compared == 2 and failures == [None]
    assert call(3, changing) == ("ran", changing)


def test_global_state_ignores_grad_mode_only():
    with torch.no_grad():
        from torch._C._dynamo.guards import GlobalStateGuard

        state = GlobalStateGuard().__getstate__()
    checks = guard_check.global_state_checks(state)
    assert checks[torch.is_grad_enabled()]()
    with torch.no_grad():
        assert checks[False]()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert not checks[torch.is_grad_enabled()]()


def test_global_state_read_fast_or_in_full_checks_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """CC-21 (e): a recorded GLOBAL_STATE that is the live one as torch writes it but for grad mode takes a short path
    (`ambient.global_state_checks`); one written otherwise (a field torch does not read) is read field by field. Both
    check the same state, under either grad mode, whatever differs."""
    from torch._C._dynamo.guards import GlobalStateGuard

    with torch.no_grad():
        fields = json.loads(GlobalStateGuard().__getstate__())
    states = [fields, {**fields, "grad_mode": True}, {**fields, "num_threads": fields["num_threads"] + 1},
              {**fields, "default_dtype": fields["default_dtype"] + 1}]
    read_in_full: list[str] = []
    state_fields = ambient.state_fields
    monkeypatch.setattr(ambient, "state_fields", lambda state, live: read_in_full.append(state) or state_fields(
        state, live))
    for index, recorded in enumerate(states):
        before = len(read_in_full)
        fast = guard_check.global_state_checks(json.dumps(recorded, separators=(",", ":")))
        assert (len(read_in_full) > before) is (index >= 2)  # the first two differ from the live one in grad mode alone
        full = guard_check.global_state_checks(json.dumps({**recorded, "not read by torch": 1}))
        assert len(read_in_full) > before + (index >= 2)
        for grad in (False, True):
            with torch.set_grad_enabled(grad):
                expected = recorded["num_threads"] == fields["num_threads"] and (
                    recorded["default_dtype"] == fields["default_dtype"])
                assert fast[grad]() is full[grad]() is expected, (recorded, grad)
    for damaged in (7, 1, None, "x", [True]):  # a recorded grad mode that is no flag: refused as before (CC-17)
        with pytest.raises(ValueError, match="'grad_mode' is .*this torch writes a flag"):
            guard_check.global_state_checks(json.dumps({**fields, "grad_mode": damaged}, separators=(",", ":")))


_LIVE = {"grad_mode": True, "num_threads": 2, "default_dtype": 6, "deterministic": False,
         "autocast_state": {"cached_enabled": True, "dtype": [15, 5], "enabled": [False, False]}}
_AUTOCAST = _LIVE["autocast_state"]


@pytest.mark.parametrize(("recorded", "named"), [
    ({**_LIVE, "num_threads": 2.5, "extra": [1], "\ud800": "\ud800"}, None),  # unread fields are left out
    ({**_LIVE, "autocast_state": {**_AUTOCAST, "dtype": [15, 5, 7, "x"], "x": None}}, None),  # a longer list
    ({**_LIVE, "num_threads": "2"}, "'num_threads' is '2': this torch writes a number"),
    ({**_LIVE, "deterministic": 0}, "'deterministic' is 0: this torch writes a flag"),
    ({**_LIVE, "num_threads": True}, "'num_threads' is True: this torch writes a number"),
    ({**_LIVE, "default_dtype": None}, "'default_dtype' is None: this torch writes a number"),
    ({**_LIVE, "num_threads": float("nan")}, "'num_threads' is nan"),
    ({**_LIVE, "num_threads": float("-inf")}, "'num_threads' is -inf"),
    ({**_LIVE, "num_threads": 2**64}, "'num_threads' is 18446744073709551616"),
    ({**_LIVE, "autocast_state": {**_AUTOCAST, "dtype": [15]}}, "'autocast_state.dtype' is [15]: this torch writes a "
                                                                "list as long as its own"),
    ({**_LIVE, "autocast_state": {**_AUTOCAST, "enabled": [False, 0]}}, "'autocast_state.enabled[1]' is 0"),
    ({**_LIVE, "autocast_state": {"dtype": [15, 5], "enabled": [False, False]}}, "lacks 'autocast_state.cached_enab"),
    ({**_LIVE, "autocast_state": [True]}, "'autocast_state' is [True]: this torch writes an object"),
    ({k: v for k, v in _LIVE.items() if k != "num_threads"}, "lacks 'num_threads'"),
    ([1, 2], "a JSON list, not an object"),
])
def test_a_recorded_global_state_is_of_the_form_torch_writes(recorded: object, named: str | None) -> None:
    """CC-17: torch's C++ reader aborts the process on a GLOBAL_STATE field it lacks, of another kind, a number it
    cannot hold or a list shorter than its own, so each field the live state writes must be there in that form
    (`ambient.state_fields`, pure); what it hands torch holds only those fields, its lists as long as the live ones."""
    state = json.dumps(recorded)
    if named is None:
        assert isinstance(recorded, dict)
        expected = {name: recorded[name] for name in _LIVE}
        expected["autocast_state"] = {name: recorded["autocast_state"][name][:2] if name != "cached_enabled"
                                      else recorded["autocast_state"][name] for name in _AUTOCAST}
        assert ambient.state_fields(state, _LIVE) == expected
    else:
        with pytest.raises(ValueError, match=re.escape(named)):
            ambient.state_fields(state, _LIVE)


@pytest.mark.parametrize("edit", ["NaN", "Infinity", "1e400", "-" + "9" * 30, '"\\ud800"'])
def test_the_global_state_torch_parses_is_refused_before_it(edit: str) -> None:
    """CC-17: in a fresh process (an abort would end this one), a recorded GLOBAL_STATE whose number of threads is a
    JSON number torch's C++ reader cannot parse or hold, or a text of invalid Unicode, is a ValueError before torch
    reads it."""
    program = (
        "import sys, json; sys.path[:0] = sys.argv[2:]\n"
        "from torch._C._dynamo.guards import GlobalStateGuard\n"
        "from torchair_ref.inference.guard_kinds import ambient\n"
        "key = '\"num_threads\":'\n"
        "state = GlobalStateGuard().__getstate__().replace(key, key + sys.argv[1] + ',\"x\":')\n"
        "try:\n    ambient.global_state_checks(state)\nexcept ValueError as exc:\n    print('refused:', exc)\n"
    )
    impl = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "impl")
    out = subprocess.run([sys.executable, "-c", program, edit, impl], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.startswith("refused: the recorded GLOBAL_STATE's 'num_threads'"), out


def test_the_checks_import_no_dynamo():
    program = (
        "import sys; sys.path[:0] = sys.argv[1:]\n"
        "from torchair_ref.inference import guard_check\n"
        "guard_check.global_state_checks('{\"grad_mode\": false}') if False else None\n"
        "from torch._C._dynamo.guards import GlobalStateGuard\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    impl = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "impl")
    out = subprocess.run([sys.executable, "-c", program, impl], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_guard_failure_that_names_no_guard_is_traced_afresh_saying_why():
    from torchair_ref.inference import cached, inputs

    with pytest.raises(inputs.InputMismatchError, match="each held when checked again alone"):
        cached.CachedFunction._guard_failed(None, object())


def _checked_method(self, x, n, *rest, mask=None, **extra):
    return ("ran", n)


def _checks():
    kw = dict(fixed=frozenset({"self"}), graph_inputs=frozenset({"L['x']"}))
    return (translate("LAMBDA_GUARD", None, ["4 <= L['x'].size()[0]", "L['n'] != 1"], None, **kw)
            + translate("EQUALS_MATCH", "L['n']", ["L['n'] == 3"], 3, **kw))


def _guarded_counting_compiles(monkeypatch, stored):
    """`_checked_method` guarded by `_checks()` with `stored`, and the list of the modes `guard_check` compiles in."""
    modes = []

    def counting(source, filename, mode, *args, **kwargs):
        modes.append(mode)
        return compile(source, filename, mode, *args, **kwargs)

    monkeypatch.setattr(guard_check, "compile", counting, raising=False)
    wrapped = guard_check.guarded_method(_checked_method, _checked_method, _checks(),
                                         lambda spec, *args, **kwargs: ("failed", spec and spec.guard), {},
                                         stored=stored)
    return types.MethodType(wrapped, object()), modes


def test_a_stored_check_is_loaded_instead_of_compiled(monkeypatch):
    """CC-14: the per-call check the cold process compiled (`stored_code`) is what a warm start with the same outline
    runs: no source is read or written and nothing is compiled before a check fails, and it checks as a compiled
    one does."""
    stored = guard_check.stored_code(_checked_method, _checks())
    assert set(stored) == {"sha256", "outline", "code", "replay"}
    reads = []
    real = guard_check._source_code
    monkeypatch.setattr(guard_check, "_source_code", lambda source, *a, **k: reads.append(source) or real(source, *a,
                                                                                                            **k))
    call, modes = _guarded_counting_compiles(monkeypatch, stored)
    assert call(torch.zeros(8), 3) == ("ran", 3)
    assert modes == [] and reads == []
    assert call(torch.zeros(2), 3) == ("failed", "LAMBDA_GUARD")
    assert call(torch.zeros(8), 4) == ("failed", "EQUALS_MATCH")
    assert modes == ["exec"] and reads  # the slow path that names the failing check, written at the first failure


def test_the_outline_follows_what_the_check_does(monkeypatch):
    """Another source, another signature or another check kind: another outline; the same specs read back from JSON:
    the same outline. A constant is bound, not written: a check stored for `n == 3` has the outline of `n == 4`, and
    loaded for `n == 4` it compares with 4."""
    kw = dict(fixed=frozenset({"self"}), graph_inputs=frozenset({"L['x']"}))
    sizes = translate("LAMBDA_GUARD", None, ["4 <= L['x'].size()[0]", "L['n'] != 1"], None, **kw)

    def outline(function, specs):
        return guard_check._Written(function, specs, {}).outline()

    def other_signature(self, x, n, *rest, mask=None):
        return None

    base = outline(_checked_method, _checks())
    others = [
        outline(_checked_method, translate("LAMBDA_GUARD", None, ["4 <= L['x'].size()[1]", "L['n'] != 1"], None,
                                           **kw) + translate("EQUALS_MATCH", "L['n']", ["L['n'] == 3"], 3, **kw)),
        outline(other_signature, _checks()),
        outline(_checked_method, sizes + translate("TYPE_MATCH", "L['n']", ["type(L['n']) is int"], 3, **kw)),
    ]
    assert len({base, *others}) == 4
    assert outline(_checked_method, [guard_kinds.from_json(s.to_json()) for s in _checks()]) == base
    four = sizes + translate("EQUALS_MATCH", "L['n']", ["L['n'] == 4"], 4, **kw)
    assert outline(_checked_method, four) == base
    stored, reads, real = guard_check.stored_code(_checked_method, _checks()), [], guard_check._source_code
    monkeypatch.setattr(guard_check, "_source_code", lambda *a, **k: reads.append(a) or real(*a, **k))
    check = guard_check.guarded_method(_checked_method, _checked_method, four, lambda spec, *a, **k: "failed", {},
                                       stored=stored)
    call = types.MethodType(check, object())
    assert call(torch.zeros(8), 4) == ("ran", 4) and reads == []
    assert call(torch.zeros(8), 3) == "failed"


def test_the_outline_follows_the_code_that_writes_the_source(monkeypatch, tmp_path):
    """A source reader of another build (here: `guard_spec` loaded from a copy with another plain-source pattern)
    gives another outline, so a stored check it wrote is not taken for this one's; the same code loaded again from
    the same file gives the same outline."""
    import importlib.util

    before = guard_check._Written(_checked_method, _checks(), {}).outline()
    with open(guard_spec.__file__, encoding="utf-8") as handle:
        text = handle.read()
    assert text.count("_PLAIN_STEP = re.compile(") == 1

    def loaded(source: str, name: str) -> types.ModuleType:
        path = tmp_path / f"{name}.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location(f"torchair_test_{name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    same, again = loaded(text, "same"), loaded(text, "same")
    other = loaded(text.replace("_PLAIN_STEP = re.compile(", "_PLAIN_STEP = re.compile(r'(?:x)?' + "), "other")
    assert same.LOADED_DIGEST == again.LOADED_DIGEST != other.LOADED_DIGEST != guard_spec.LOADED_DIGEST
    monkeypatch.setattr(guard_check, "guard_spec", same)
    with_same = guard_check._Written(_checked_method, _checks(), {}).outline()
    monkeypatch.setattr(guard_check, "guard_spec", other)
    assert guard_check._Written(_checked_method, _checks(), {}).outline() not in (with_same, before)


_LOADED_MODULE = """\
import sys
from torchair_ref.inference.guard_values import loaded_code_digest
LOADED_DIGEST = loaded_code_digest(sys._getframe(0).f_code)
VALUES = frozenset(SET)
def f():
    return ANSWER
"""


#: a set constant, which Python 3.11 marshals in a fixed order (3.10 in hash order: no set constant there)
_SET = '{"size", "stride", "dim", "numel"}' if sys.version_info >= (3, 11) else '("size", "stride")'


def test_a_modules_loaded_digest_names_the_code_it_runs_not_its_file(tmp_path):
    """`loaded_code_digest`, taken in a module's body: the same in processes with other hash seeds (a set constant
    included); a `.pyc` whose source file now says otherwise (unchecked-hash bytecode) gives the digest of the code
    it runs, not of the file; other code, another digest."""
    import py_compile

    package = tmp_path / "loaded"
    package.mkdir()
    source = package / "probe.py"

    def digest(seed: int) -> str:
        out = subprocess.run(
            [sys.executable, "-c", "import probe; print(probe.f(), probe.LOADED_DIGEST)"],
            env=program_env({"PYTHONHASHSEED": str(seed), "PYTHONDONTWRITEBYTECODE": "1"}), cwd=package,
            capture_output=True, text=True, check=True, timeout=120)
        return out.stdout.strip()

    source.write_text(_LOADED_MODULE.replace("ANSWER", "1").replace("SET", _SET))
    one = digest(1)
    assert one.startswith("1 code:") and digest(2) == one
    py_compile.compile(str(source), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    # the bytecode that runs still returns 1
    source.write_text(_LOADED_MODULE.replace("ANSWER", "2").replace("SET", _SET))
    assert digest(3) == one
    for cached in (package / "__pycache__").iterdir():
        cached.unlink()
    two = digest(4)
    assert two.startswith("2 code:") and two.split()[1] != one.split()[1]


def test_a_template_not_written_as_ast_writes_it_is_rewritten_as_ast_would():
    """A validated template in another spelling than `ast`'s (a comment, other spacing) is rewritten from `ast`'s
    spelling: the comment does not swallow the rest of the check."""
    written = guard_expressions.substitute("_s0  !=  1 # note", {"_s0": "n"}, "_p_")
    assert written == "n != 1" and eval(f"({written}) and True", {"n": 2})  # noqa: S307


def _mode_method(self, mode):
    return mode


def test_a_string_in_a_check_that_looks_like_a_placeholder_stays_as_it_is():
    """The source is written from the outline by replacing each read's placeholder (`_tq_p{n}`) with the code reading
    it; a string constant holding such a name is kept as it is."""
    kw = dict(fixed=frozenset({"self"}), graph_inputs=frozenset())
    specs = translate("LAMBDA_GUARD", None, ["L['mode'] == '_tq_p0 \\'_tq_p1\\''"], None, **kw)
    written = guard_check._Written(_mode_method, specs, {})
    assert written.source.count("_tq_p") == 2 and "mode == \"_tq_p0 '_tq_p1'\"" in written.source, written.source
    check = guard_check.guarded_method(_mode_method, _mode_method, specs, lambda spec, *a, **k: "failed", {},
                                       stored=guard_check.stored_code(_mode_method, specs))
    call = types.MethodType(check, object())
    assert call("_tq_p0 '_tq_p1'") == "_tq_p0 '_tq_p1'" and call("mode") == "failed"


def _stored_variants():
    good = guard_check.stored_code(_checked_method, _checks())

    def packed(data: bytes) -> str:
        return base64.b64encode(zlib.compress(data)).decode("ascii")

    other_title = compile("def guarded(self, x, n, *rest, mask=None, **extra):\n    return 0\n", "<other>", "exec")
    return {
        "none": None,
        "not a dict": "x",
        "another check": {**good, "outline": "0" * 64},
        "no outline": {"sha256": good["sha256"], "code": good["code"]},
        "outline not a str": {**good, "outline": 1},
        "not base64": {**good, "code": "!!!"},
        "not compressed": {**good, "code": base64.b64encode(b"garbage").decode("ascii")},
        "not marshal": {**good, "code": packed(b"\xff\x00garbage")},
        "not code": {**good, "code": packed(marshal.dumps(42))},
        "code of another file": {**good, "code": packed(marshal.dumps(other_title))},
        "code not a str": {**good, "code": 1},
    }


@pytest.mark.parametrize("case", list(_stored_variants()))
def test_a_stored_check_that_does_not_fit_is_compiled_again(monkeypatch, case):
    """A record without stored code, with code for another check (another outline) or without an outline, or with a
    value that does not decode to code written for this check: the check is compiled from its source, and it
    checks the same."""
    call, modes = _guarded_counting_compiles(monkeypatch, _stored_variants()[case])
    assert modes == ["exec"]
    assert call(torch.zeros(8), 3) == ("ran", 3)
    assert call(torch.zeros(8), 4) == ("failed", "EQUALS_MATCH")


def _two_strings(self, a, b):
    return a, b


def test_the_cold_process_stores_the_check_a_warm_start_writes_from_the_file(monkeypatch):
    """Two guards compare with one string object in the cold process; read back from the file they are two equal
    strings, which the warm start's check names apart. The stored check is written from the guards as read back
    (`saving._stored_check`), so the warm start loads it; written from the cold objects it would not fit."""
    value = "".join(["sd", "pa"])  # one object, not interned
    kw = dict(fixed=frozenset({"self"}), graph_inputs=frozenset())
    specs = (translate("EQUALS_MATCH", "L['a']", ["L['a'] == 'sdpa'"], value, **kw)
             + translate("EQUALS_MATCH", "L['b']", ["L['b'] == 'sdpa'"], value, **kw))
    saved = {"guards": [spec.to_json() for spec in specs]}
    stored = saving._stored_check(_two_strings, saved)
    assert stored is not None and stored != guard_check.stored_code(_two_strings, specs)
    warm_specs = [guard_kinds.from_json(spec) for spec in artifact.decode(artifact.encode(saved))["guards"]]
    compiled = []
    monkeypatch.setattr(guard_check, "compile",
                        lambda *args, **kwargs: compiled.append(args[2]) or compile(*args, **kwargs), raising=False)
    check = guard_check.guarded_method(_two_strings, _two_strings, warm_specs, lambda *a, **k: "failed", {},
                                       stored=stored)
    call = types.MethodType(check, object())
    assert compiled == [] and call("sdpa", "sdpa") == ("sdpa", "sdpa") and call("sdpa", "eager") == "failed"
