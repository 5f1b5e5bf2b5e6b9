"""Traced code without a source file is identified by what it is (CC-14, CC-22): frozen standard-library functions,
generated dataclass `__init__` reached through a `functools.wraps` wrapper; a change makes the record stale."""
from __future__ import annotations

import _collections_abc
import functools
import importlib
import os
import subprocess
import sys
import textwrap

import pytest

from torchair_ref.inference import code_identity, record

_WRAPPED_DATACLASS = """
import dataclasses
import functools


def _wrap(init):
    @functools.wraps(init)
    def wrapper(self, *args, **kwargs):
        init(self, *args, **kwargs)
    return wrapper


@dataclasses.dataclass
class Output:
    {fields}


Output.__init__ = _wrap(Output.__init__)
"""


def test_frozen_function_is_identified_and_checked() -> None:
    code = _collections_abc.Mapping.__contains__.__code__
    assert code.co_filename == "<frozen _collections_abc>"
    [source] = record.traced_sources([code])
    assert (source.file, source.qualname) == ("<frozen _collections_abc>", "Mapping.__contains__")
    assert record.changed_sources([source]) == []
    other = record.TracedSource(source.qualname, source.file, 0, 0, "code:" + "0" * 64)
    assert record.changed_sources([other]) == ["Mapping.__contains__ (<frozen _collections_abc>, its code differs)"]
    gone = record.TracedSource("Mapping.__no_such__", source.file, 0, 0, source.sha256)
    assert len(record.changed_sources([gone])) == 1


def test_unidentifiable_code_still_refused() -> None:
    code = compile("def f():\n    return 1\n", "<made up>", "exec").co_consts[0]
    with pytest.raises(OSError, match="cannot be read"):
        record.traced_sources([code])
    assert code_identity.identify(code) is None


def _load(tmp_path, monkeypatch, fields: str, name: str):
    (tmp_path / f"{name}.py").write_text(_WRAPPED_DATACLASS.format(fields=fields))
    monkeypatch.syspath_prepend(str(tmp_path))
    return importlib.import_module(name)


def test_wrapped_dataclass_init_is_identified_and_a_change_is_stale(tmp_path, monkeypatch) -> None:
    module = _load(tmp_path, monkeypatch, "a: int = 1", "zoo_wrapped_output")
    generated_code = module.Output.__init__.__wrapped__.__code__
    assert generated_code.co_filename == "<string>"
    [source] = record.traced_sources([generated_code])
    assert source.file == "<dataclass>" and source.qualname == "zoo_wrapped_output:Output.__init__"
    assert record.changed_sources([source]) == []
    (tmp_path / "zoo_wrapped_output.py").write_text(_WRAPPED_DATACLASS.format(fields="a: int = 1\n    b: int = 2"))
    sys.modules.pop("zoo_wrapped_output")
    importlib.invalidate_caches()
    importlib.import_module("zoo_wrapped_output")
    assert record.changed_sources([source]) == [
        "zoo_wrapped_output:Output.__init__ (the fields of dataclass zoo_wrapped_output:Output)"]


def test_wrapper_walk_is_bounded() -> None:
    def looped():
        return None
    wrapper = functools.wraps(looped)(lambda: None)
    looped.__wrapped__ = wrapper  # a cycle: the walk stops instead of hanging
    from torchair_ref.inference import generated
    assert generated._code(wrapper) is not None


def test_digest_is_the_same_under_another_hash_seed() -> None:
    program = textwrap.dedent("""
        import _collections_abc, os
        from torchair_ref.inference import record
        print(record.traced_sources([_collections_abc.Mapping.__contains__.__code__,
                                     os._Environ.__getitem__.__code__]))
    """)
    outputs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, check=True)
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] and "code:" in outputs[0]


def test_frozen_closure_held_by_a_module_object_is_identified() -> None:
    code = os.environ.encodekey.__code__
    assert "<locals>" in code.co_qualname and code.co_filename == "<frozen os>"
    [source] = record.traced_sources([code])
    assert source.file == "<frozen os>" and "<" not in source.qualname
    assert record.changed_sources([source]) == []


def test_a_code_digest_is_computed_once_per_code_object_and_follows_a_replaced_code() -> None:
    """The digest of a code object is remembered (a warm start digests hundreds of traced functions, several times
    over); the memory is per object, so a function whose `__code__` is replaced digests to the new code's digest."""
    from torchair_ref.inference import guard_values

    def helper(x):
        return x + 1

    def other(x):
        return x + 2

    first = guard_values.code_digest(helper.__code__)
    assert guard_values._CODE_DIGESTS[id(helper.__code__)] == (helper.__code__, first)
    assert first == guard_values._code_digest(helper.__code__)
    helper.__code__ = other.__code__
    assert guard_values.code_digest(helper.__code__) == guard_values._code_digest(other.__code__) != first
    same = other.__code__.replace()  # an equal, distinct code object: its own entry, the same digest
    assert same is not other.__code__ and guard_values.code_digest(same) == guard_values.code_digest(other.__code__)


def test_the_code_digest_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that makes code objects without end (vLLM-Ascend's per-batch-size proxy forwards) keeps a bounded
    number alive in the digest memory; digests stay right after it is emptied."""
    from torchair_ref.inference import guard_values

    monkeypatch.setattr(guard_values, "_CODE_DIGESTS", {})
    monkeypatch.setattr(guard_values, "_CODE_DIGESTS_MAX", 8)

    def helper(x):
        return x + 1

    codes = [helper.__code__.replace(co_name=f"proxy_{n}") for n in range(20)]
    digests = [guard_values.code_digest(code) for code in codes]
    assert len(guard_values._CODE_DIGESTS) <= 8
    assert digests == [guard_values._code_digest(code) for code in codes]


def _with_handler(x):
    try:
        return x + 1
    except TypeError:
        return x


def test_a_code_digest_tells_apart_what_changes_what_the_code_does() -> None:
    """CC-14: constants equal in value but not in type, another exception table over the same bytecode, a frozenset
    constant and a list holding its stable text (the form a digest writes a frozenset in) digest differently."""
    from torchair_ref.inference import guard_values

    digests = {guard_values._code_digest(c) for c in ((lambda: 1).__code__, (lambda: True).__code__,
                                                      (lambda: 1.0).__code__, (lambda: (1,)).__code__)}
    assert len(digests) == 4
    code = _with_handler.__code__
    assert code.co_exceptiontable and guard_values._code_digest(code) != guard_values._code_digest(
        code.replace(co_exceptiontable=b""))
    with_set = code.replace(co_consts=(frozenset({1, 2}),))
    with_list = code.replace(co_consts=([guard_values._stable(frozenset({1, 2}))],))
    with_tuple = code.replace(co_consts=(("stable", guard_values._stable(frozenset({1, 2}))),))
    assert len({guard_values._code_digest(c) for c in (with_set, with_list, with_tuple)}) == 3


def _returns_a_name():
    return "a_name_returned_here"


def test_a_code_digest_is_the_same_after_a_round_trip_through_a_pyc() -> None:
    """CC-22: code loaded from a `.pyc` digests as the code compiled from source (nested functions, tuple and
    frozenset constants, keyword calls); and a digest does not change when more of the process refers to one of the
    code's objects (`marshal` from format 3 on writes a shared object differently): it reads values, never how
    objects are shared."""
    import marshal

    from torchair_ref.inference import guard_values

    source = textwrap.dedent("""
        def outer(x, *, scale=2.0):
            def inner(y):
                return y in {"alpha", "beta", 3} or y == ("a", (1, 2.5))
            return dict(value=x * scale, seen=inner(x), text="not an identifier!")
    """)
    compiled = compile(source, "<digest test>", "exec")
    loaded = marshal.loads(marshal.dumps(compiled))
    assert loaded is not compiled
    assert guard_values._code_digest(loaded) == guard_values._code_digest(compiled)
    code = _returns_a_name.__code__
    code = code.replace(co_consts=code.co_consts[:-1] + ("".join(["not ", "shared yet"]),))  # held by code only
    before = guard_values._code_digest(code)
    held = code.co_consts[-1]  # now the process holds that string twice
    assert held == "not shared yet" and guard_values._code_digest(code) == before


def test_a_digest_takes_what_marshal_cannot_write_as_it_is() -> None:
    """A class member named by a str subclass (`type()` keeps it), and an integer past `repr`'s 4300 digits in a
    set constant: each digests, and as what it is (another name, another integer: another digest)."""
    from torchair_ref.inference import guard_values

    class Name(str):
        pass

    def method(self):
        return 1

    named = type("Named", (), {Name("m"): method, "__module__": __name__})
    plain = type("Named", (), {"m": method, "__module__": __name__})
    other = type("Named", (), {"n": method, "__module__": __name__})
    assert guard_values.class_digest(named) == guard_values.class_digest(plain) != guard_values.class_digest(other)
    big = "0x" + "f" * 4000
    digests = {guard_values._code_digest(compile(f"x in {{{big}, {n}}}", "<big>", "eval")) for n in (1, 2)}
    assert len(digests) == 2
